#include "tracer/syscalls/timed_waits.h"

#include <linux/futex.h>
#include <sys/syscall.h>

#include <cerrno>
#include <ctime>

#include <algorithm>

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
    deadline = VirtualClock::elapsed_at(*absolute, *length);
  return sleep_until(clock, deadline, 0, nullptr);
}

// A FUTEX_WAIT or FUTEX_WAIT_BITSET: queued in cmc's futexes (held) while
// the word holds the value; its timeout on the virtual clock.
Result<Action> futex_wait(SeccompStop &stop, int op) {
  const Registers &regs = stop.regs;
  const FutexWait wait{.process = stop.tracee.process(),
                       .address = regs.arg(0),
                       .value = static_cast<std::uint32_t>(regs.arg(2)),
                       .bitset = op == FUTEX_WAIT_BITSET
                                     ? static_cast<std::uint32_t>(regs.arg(5))
                                     : ~0U};
  auto word = stop.tracee.read(RemotePtr<std::uint32_t>{wait.address});
  if (!word || *word != wait.value || wait.bitset == 0)
    return Action::run(); // the kernel answers EFAULT, EAGAIN or EINVAL
  const auto timeout = regs.arg_ptr<timespec>(3);
  if (timeout.is_null())
    return Action::wait_futex(wait, std::nullopt, 0);
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
    deadline = VirtualClock::elapsed_at(
        (regs.arg(1) & FUTEX_CLOCK_REALTIME) != 0 ? CLOCK_REALTIME
                                                  : CLOCK_MONOTONIC,
        *length);
  Action timed = sleep_until(clock, deadline, -ETIMEDOUT, nullptr);
  if (timed.kind != Action::Kind::kHold)
    return timed;
  return Action::wait_futex(wait, timed.deadline, -ETIMEDOUT);
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
  // A count is an int of the kernel's; INT_MAX wakes every waiter.
  const auto count = [](std::uint64_t arg) {
    return std::max(static_cast<int>(arg), 0);
  };
  switch (op) {
  case FUTEX_WAIT:
  case FUTEX_WAIT_BITSET:
    return futex_wait(stop, op);
  case FUTEX_WAKE:
  case FUTEX_WAKE_BITSET: {
    const auto bitset =
        op == FUTEX_WAKE_BITSET ? static_cast<std::uint32_t>(regs.arg(5)) : ~0U;
    if (bitset == 0)
      return Action::answer(-EINVAL);
    return Action::wake_futex({.process = stop.tracee.process(),
                               .address = regs.arg(0),
                               .bitset = bitset,
                               .count = count(regs.arg(2))},
                              false);
  }
  case FUTEX_REQUEUE:
  case FUTEX_CMP_REQUEUE: {
    if (op == FUTEX_CMP_REQUEUE) {
      auto word = stop.tracee.read(regs.arg_ptr<std::uint32_t>(0));
      if (!word)
        return Action::answer(-EFAULT);
      if (*word != static_cast<std::uint32_t>(regs.arg(5)))
        return Action::answer(-EAGAIN);
    }
    // The count to requeue is the timeout argument's register, as a number.
    return Action::wake_futex({.process = stop.tracee.process(),
                               .address = regs.arg(0),
                               .count = count(regs.arg(2)),
                               .requeue_to = regs.arg(4),
                               .requeue_count = count(regs.arg(3))},
                              op == FUTEX_CMP_REQUEUE);
  }
  default:
    // FUTEX_WAKE_OP and the priority-inheritance operations keep state in
    // the kernel that cmc's own futexes do not have.
    return Error{fmt::format(
        "the target calls futex() with operation {}, which cmc's scheduler "
        "does not emulate (it runs one thread at a time with futexes of its "
        "own: FUTEX_WAIT, FUTEX_WAKE, their _BITSET forms and the requeues)",
        op)};
  }
}

Result<Action> on_sched_yield(SeccompStop & /*stop*/) {
  return Action::yield();
}

Result<Action> on_exit_thread(SeccompStop &stop) {
  if (stop.tracee.focused() != stop.tracee.process())
    return Action::run(); // a thread's end, which waitpid reports
  auto status = stop.tracee.proc_file("status");
  if (!status)
    return status.error();
  const auto at = status->find("\nThreads:\t");
  if (at == std::string::npos ||
      status->compare(at, 12, "\nThreads:\t1\n") == 0)
    return Action::run(); // the last thread: the process ends
  return Error{"the target's main thread ended (pthread_exit) while its "
               "other threads run on; cmc reads a process through its main "
               "thread and cannot check it after that"};
}

long interrupt_sleep(ProcessAccess &tracee, const Registers &regs,
                     std::chrono::nanoseconds left) {
  RemotePtr<timespec> rem{0};
  if (regs.syscall_number() == SYS_nanosleep)
    rem = regs.arg_ptr<timespec>(1);
  else if ((regs.arg(1) & TIMER_ABSTIME) == 0)
    rem = regs.arg_ptr<timespec>(3);
  if (rem.is_null())
    return -EINTR;
  return tracee.write(rem, to_timespec(left)).ok() ? -EINTR : -EFAULT;
}

Result<Action> on_futex_waitv(SeccompStop & /*stop*/) {
  // In the kernel it would sleep where cmc's scheduler cannot see it.
  return Error{"the target waits on several futexes at once "
               "(futex_waitv); cmc's scheduler emulates futex() waits only"};
}

} // namespace cmc::tracer
