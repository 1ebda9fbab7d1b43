#pragma once

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handlers of alarm, setitimer, getitimer and the POSIX timer calls:
// answered by the environment's SignalTimers, on the virtual clock; the
// kernel's timers are never armed.
[[nodiscard]] Result<Action> on_alarm(SeccompStop &stop);
[[nodiscard]] Result<Action> on_setitimer(SeccompStop &stop);
[[nodiscard]] Result<Action> on_getitimer(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_create(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_settime(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_gettime(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_getoverrun(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_delete(SeccompStop &stop);

} // namespace cmc::tracer
