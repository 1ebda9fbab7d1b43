#pragma once

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handlers of timerfd_settime and timerfd_gettime: answered by the
// environment's TimerFds.
[[nodiscard]] Result<Action> on_timerfd_settime(SeccompStop &stop);
[[nodiscard]] Result<Action> on_timerfd_gettime(SeccompStop &stop);

} // namespace cmc::tracer
