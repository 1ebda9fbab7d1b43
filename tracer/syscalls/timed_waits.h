#pragma once

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
// futex_waitv: refused (an Error), never left to sleep in the kernel.
[[nodiscard]] Result<Action> on_futex_waitv(SeccompStop &stop);

// The handlers of the timers cmc does not control: a timer that fires in
// real time would make runs differ, so arming one is an error; disarming
// one (alarm(0), a zero it_value, as redis does at start) runs.
[[nodiscard]] Result<Action> on_alarm(SeccompStop &stop);
[[nodiscard]] Result<Action> on_setitimer(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_settime(SeccompStop &stop);

} // namespace cmc::tracer
