#include "tracer/syscalls/signal_timer_calls.h"

#include "tracer/syscalls/environment.h"

namespace cmc::tracer {

Result<Action> on_alarm(SeccompStop &stop) {
  Environment &environment = stop.environment;
  return Action::answer(
      environment.signal_timers().alarm(environment.clock(), stop.regs));
}

Result<Action> on_setitimer(SeccompStop &stop) {
  Environment &environment = stop.environment;
  return Action::answer(environment.signal_timers().setitimer(
      stop.tracee, environment.clock(), stop.regs));
}

Result<Action> on_getitimer(SeccompStop &stop) {
  Environment &environment = stop.environment;
  return Action::answer(environment.signal_timers().getitimer(
      stop.tracee, environment.clock(), stop.regs));
}

Result<Action> on_timer_create(SeccompStop &stop) {
  return Action::answer(
      stop.environment.signal_timers().create(stop.tracee, stop.regs));
}

Result<Action> on_timer_settime(SeccompStop &stop) {
  Environment &environment = stop.environment;
  return Action::answer(environment.signal_timers().settime(
      stop.tracee, environment.clock(), stop.regs));
}

Result<Action> on_timer_gettime(SeccompStop &stop) {
  Environment &environment = stop.environment;
  return Action::answer(environment.signal_timers().gettime(
      stop.tracee, environment.clock(), stop.regs));
}

Result<Action> on_timer_getoverrun(SeccompStop &stop) {
  return Action::answer(stop.environment.signal_timers().getoverrun(stop.regs));
}

Result<Action> on_timer_delete(SeccompStop &stop) {
  return Action::answer(stop.environment.signal_timers().remove(stop.regs));
}

} // namespace cmc::tracer
