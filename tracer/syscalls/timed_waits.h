#pragma once

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handlers of the calls that wait on the clock: sleeps and futex waits
// run on the virtual clock, held until a tick passes their deadline.
[[nodiscard]] Result<Action> on_nanosleep(SeccompStop &stop);
[[nodiscard]] Result<Action> on_clock_nanosleep(SeccompStop &stop);
// A futex wait with no timeout runs in the kernel, parked: only another
// thread's wake ends it. One with a timeout is held at its entry, on the
// virtual clock; it ends at its deadline or when another thread changes
// the word. Other futex operations run.
[[nodiscard]] Result<Action> on_futex(SeccompStop &stop);

// The handlers of the timers cmc does not control: a timer that fires in
// real time would make runs differ, so arming one is an error; disarming
// one (alarm(0), a zero it_value, as redis does at start) runs.
[[nodiscard]] Result<Action> on_alarm(SeccompStop &stop);
[[nodiscard]] Result<Action> on_setitimer(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timer_settime(SeccompStop &stop);

} // namespace cmc::tracer
