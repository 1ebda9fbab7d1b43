#include "tracer/syscalls/timed_waits.h"

#include <linux/futex.h>
#include <sys/time.h>

#include <cerrno>
#include <ctime>

#include <fmt/format.h>

#include "tracer/process/process_access.h"
#include "tracer/syscalls/environment.h"
#include "tracer/time/virtual_clock.h"

namespace cmc::tracer {
namespace {

// Held until deadline (nothing: the call's time is invalid), then skipped
// with result; at once when the deadline has passed.
Action sleep_until(const VirtualClock &clock,
                   std::optional<std::chrono::nanoseconds> deadline,
                   long result, Action::Recheck recheck) {
  if (!deadline)
    return Action::answer(-EINVAL);
  if (*deadline <= clock.elapsed())
    return Action::answer(result);
  return Action::hold(deadline, result, recheck);
}

// A sleep for the timespec at request: relative, or an instant of clock.
Result<Action> sleep_for(SeccompStop &stop, RemotePtr<timespec> request,
                         std::optional<clockid_t> absolute) {
  auto length = stop.tracee.read(request);
  if (!length)
    return Action::answer(-EFAULT);
  const VirtualClock &clock = stop.environment.clock();
  std::optional<std::chrono::nanoseconds> deadline =
      clock.elapsed() + from_timespec(*length);
  if (absolute)
    deadline = clock.elapsed_at(*absolute, *length);
  return sleep_until(clock, deadline, 0, nullptr);
}

// The Recheck of a held futex wait. Another thread changed the word (before
// its wake, which cannot reach a wait held outside the kernel): the wait
// returns EAGAIN, as the kernel's would on seeing the new value.
Result<std::optional<Action>> futex_word_changed(const ProcessAccess &tracee,
                                                 const Syscall & /*call*/,
                                                 const Registers &regs) {
  auto word = tracee.read(regs.arg_ptr<std::uint32_t>(0));
  if (word && *word != static_cast<std::uint32_t>(regs.arg(2)))
    return std::optional(Action::answer(-EAGAIN));
  return std::optional<Action>();
}

Result<Action> refuse_timer(const SeccompStop &stop, bool disarms) {
  if (disarms)
    return Action::run();
  return Error{fmt::format("the target arms a timer with {}(); cmc does not "
                           "control timers yet (they would fire in real "
                           "time)",
                           stop.call.name)};
}

} // namespace

Result<Action> on_nanosleep(SeccompStop &stop) {
  return sleep_for(stop, stop.regs.arg_ptr<timespec>(0), std::nullopt);
}

Result<Action> on_clock_nanosleep(SeccompStop &stop) {
  const bool absolute = (stop.regs.arg(1) & TIMER_ABSTIME) != 0;
  return sleep_for(stop, stop.regs.arg_ptr<timespec>(2),
                   absolute
                       ? std::optional(static_cast<clockid_t>(stop.regs.arg(0)))
                       : std::nullopt);
}

Result<Action> on_futex(SeccompStop &stop) {
  const Registers &regs = stop.regs;
  const int op = static_cast<int>(regs.arg(1)) & FUTEX_CMD_MASK;
  if (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET)
    return Action::run();
  auto word = stop.tracee.read(regs.arg_ptr<std::uint32_t>(0));
  if (!word || *word != static_cast<std::uint32_t>(regs.arg(2)))
    return Action::run(); // the kernel answers EFAULT or EAGAIN at once
  const auto timeout = regs.arg_ptr<timespec>(3);
  if (timeout.is_null())
    return Action::park();
  auto length = stop.tracee.read(timeout);
  if (!length)
    return Action::answer(-EFAULT);
  stop.environment.note(executor::Source::kTimedWait, regs);
  const VirtualClock &clock = stop.environment.clock();
  // FUTEX_WAIT's timeout is relative; FUTEX_WAIT_BITSET's is an instant of
  // CLOCK_MONOTONIC, or of CLOCK_REALTIME with FUTEX_CLOCK_REALTIME.
  std::optional<std::chrono::nanoseconds> deadline =
      clock.elapsed() + from_timespec(*length);
  if (op == FUTEX_WAIT_BITSET)
    deadline = clock.elapsed_at((regs.arg(1) & FUTEX_CLOCK_REALTIME) != 0
                                    ? CLOCK_REALTIME
                                    : CLOCK_MONOTONIC,
                                *length);
  return sleep_until(clock, deadline, -ETIMEDOUT, futex_word_changed);
}

Result<Action> on_alarm(SeccompStop &stop) {
  return refuse_timer(stop, stop.regs.arg(0) == 0);
}

Result<Action> on_setitimer(SeccompStop &stop) {
  auto value = stop.tracee.read(stop.regs.arg_ptr<itimerval>(1));
  return refuse_timer(stop, value && value->it_value.tv_sec == 0 &&
                                value->it_value.tv_usec == 0);
}

Result<Action> on_timer_settime(SeccompStop &stop) {
  auto value = stop.tracee.read(stop.regs.arg_ptr<itimerspec>(2));
  return refuse_timer(stop, value && value->it_value.tv_sec == 0 &&
                                value->it_value.tv_nsec == 0);
}

} // namespace cmc::tracer
