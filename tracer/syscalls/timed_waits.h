#pragma once

#include <chrono>

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handlers of the calls that wait on the clock: sleeps and futex waits
// run on the virtual clock, held until a tick passes their deadline.
[[nodiscard]] Result<Action> on_nanosleep(SeccompStop &stop);
[[nodiscard]] Result<Action> on_clock_nanosleep(SeccompStop &stop);
// Futexes are cmc's (tracer/schedule/futex_queue.h): a wait that would
// sleep is held at its entry, until a wake of another thread (or its
// timeout, on the virtual clock); a wake or requeue is answered from cmc's
// queue. The operations that keep state in the kernel are an Error.
[[nodiscard]] Result<Action> on_futex(SeccompStop &stop);
// sched_yield: another thread that can run runs first.
[[nodiscard]] Result<Action> on_sched_yield(SeccompStop &stop);
// exit, a thread's own: the main thread's while others run on is an Error
// (its end is not reported until theirs, and its memory is the process's
// for cmc).
[[nodiscard]] Result<Action> on_exit_thread(SeccompStop &stop);
// A sleep cmc held (nanosleep, clock_nanosleep at regs) that a signal's
// handler interrupts before its deadline: when relative, it writes the
// time left to its rem argument, as the kernel does. Returns its result:
// EINTR, or EFAULT for a rem the target cannot take.
[[nodiscard]] long interrupt_sleep(ProcessAccess &tracee, const Registers &regs,
                                   std::chrono::nanoseconds left);
// futex_waitv: refused (an Error), never left to sleep in the kernel.
[[nodiscard]] Result<Action> on_futex_waitv(SeccompStop &stop);

} // namespace cmc::tracer
