#include "tracer/time/timer_fds.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cmc::tracer {
namespace {

using std::chrono::nanoseconds;

// Linux's ioctl of a timerfd that sets its expiration count (for
// checkpoint/restore), from fs/timerfd.c.
constexpr unsigned long kSetTicks = _IOW('T', 0, std::uint64_t);

// The clock of the target's timerfd fd, from /proc/PID/fdinfo; nothing if
// fd is not a timerfd.
std::optional<clockid_t> timer_clock(const ProcessAccess &tracee, int fd) {
  auto info = tracee.proc_file(fmt::format("fdinfo/{}", fd).c_str());
  if (!info)
    return std::nullopt;
  const auto at = info->find("clockid:");
  if (at == std::string::npos)
    return std::nullopt;
  return static_cast<clockid_t>(
      std::strtol(info->c_str() + at + std::strlen("clockid:"), nullptr, 10));
}

bool is_zero(const timespec &time) {
  return time.tv_sec == 0 && time.tv_nsec == 0;
}

} // namespace

itimerspec TimerFds::remaining(int fd, const VirtualClock &clock) const {
  itimerspec value{};
  const auto timer = timers_.find(fd);
  if (timer == timers_.end())
    return value;
  value.it_interval = to_timespec(timer->second.interval);
  value.it_value = to_timespec(timer->second.deadline - clock.elapsed());
  return value;
}

Result<long> TimerFds::settime(ProcessAccess &tracee, const VirtualClock &clock,
                               const Registers &regs) {
  const int fd = static_cast<int>(regs.arg(0));
  auto wanted = tracee.read(regs.arg_ptr<itimerspec>(2));
  if (!wanted)
    return -EFAULT;
  const auto timer_clock_id = timer_clock(tracee, fd);
  if (!timer_clock_id)
    return -EINVAL;
  const itimerspec old = remaining(fd, clock);
  if (const auto old_value = regs.arg_ptr<itimerspec>(3);
      !old_value.is_null() && !tracee.write(old_value, old).ok())
    return -EFAULT;
  timers_.erase(fd);
  if (is_zero(wanted->it_value))
    return 0;
  std::optional<nanoseconds> deadline =
      clock.elapsed() + from_timespec(wanted->it_value);
  if ((regs.arg(1) & TFD_TIMER_ABSTIME) != 0)
    deadline = VirtualClock::elapsed_at(*timer_clock_id, wanted->it_value);
  if (!deadline)
    return -EINVAL;
  timers_[fd] = {*timer_clock_id, *deadline,
                 from_timespec(wanted->it_interval)};
  if (auto fired = fire_due(tracee, clock); !fired)
    return fired.error();
  return 0;
}

Result<long> TimerFds::gettime(ProcessAccess &tracee, const VirtualClock &clock,
                               const Registers &regs) {
  const itimerspec now = remaining(static_cast<int>(regs.arg(0)), clock);
  return tracee.write(regs.arg_ptr<itimerspec>(1), now).ok() ? 0 : -EFAULT;
}

Result<void> TimerFds::fire_due(const ProcessAccess &tracee,
                                const VirtualClock &clock) {
  for (auto it = timers_.begin(); it != timers_.end();) {
    Timer &timer = it->second;
    if (timer.deadline > clock.elapsed()) {
      ++it;
      continue;
    }
    std::uint64_t expirations = 1;
    if (timer.interval.count() > 0)
      expirations += static_cast<std::uint64_t>(
          (clock.elapsed() - timer.deadline) / timer.interval);
    if (auto fired = fire(tracee, it->first, expirations); !fired)
      return fired;
    if (timer.interval.count() > 0) {
      timer.deadline += timer.interval * static_cast<long>(expirations);
      ++it;
    } else {
      it = timers_.erase(it);
    }
  }
  return {};
}

Result<void> TimerFds::fire(const ProcessAccess &tracee, int fd,
                            std::uint64_t expirations) {
  auto copy = tracee.duplicate_fd(fd);
  if (!copy)
    return {}; // closed since: nothing to wake
  // TFD_IOC_SET_TICKS sets the count: the expirations the target has not
  // read yet are taken (the copy shares the target's open file) and added.
  pollfd unread{copy->get(), POLLIN, 0};
  std::uint64_t pending = 0;
  if (poll(&unread, 1, 0) == 1 &&
      ::read(copy->get(), &pending, sizeof pending) == sizeof pending)
    expirations += pending;
  if (ioctl(copy->get(), kSetTicks, &expirations) != 0) {
    const int error = errno;
    return Error{fmt::format("cannot fire the target's timerfd {} "
                             "(TFD_IOC_SET_TICKS: {}); this kernel lacks "
                             "CONFIG_CHECKPOINT_RESTORE",
                             fd, std::strerror(error)),
                 ErrorKind::kFailed, error};
  }
  return {};
}

} // namespace cmc::tracer
