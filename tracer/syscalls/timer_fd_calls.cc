#include "tracer/syscalls/timer_fd_calls.h"

#include "tracer/syscalls/environment.h"

namespace cmc::tracer {

Result<Action> on_timerfd_settime(SeccompStop &stop) {
  Environment &environment = stop.environment;
  auto result =
      environment.timers().settime(stop.tracee, environment.clock(), stop.regs);
  if (!result)
    return result.error();
  return Action::answer(*result);
}

Result<Action> on_timerfd_gettime(SeccompStop &stop) {
  Environment &environment = stop.environment;
  auto result =
      environment.timers().gettime(stop.tracee, environment.clock(), stop.regs);
  if (!result)
    return result.error();
  return Action::answer(*result);
}

} // namespace cmc::tracer
