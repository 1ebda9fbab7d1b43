#include "tracer/time/signal_timers.h"

#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <utility>

namespace cmc::tracer {
namespace {

using std::chrono::nanoseconds;

bool is_disarming(const timespec &time) {
  return time.tv_sec == 0 && time.tv_nsec == 0;
}

// The kernel's timespec64_valid and timeval_valid.
bool valid_time(const timespec &time) {
  return time.tv_sec >= 0 && time.tv_nsec >= 0 && time.tv_nsec < 1000000000;
}

timespec from_timeval(const timeval &time) {
  return {time.tv_sec, time.tv_usec * 1000};
}

// The kernel shows an interval timer in microseconds, truncated.
timeval to_timeval(const timespec &time) {
  return {time.tv_sec, time.tv_nsec / 1000};
}

int interval_timer_key(std::uint64_t which) {
  switch (which) {
  case ITIMER_REAL:
    return SignalTimers::kRealTimer;
  case ITIMER_VIRTUAL:
    return SignalTimers::kVirtualTimer;
  case ITIMER_PROF:
    return SignalTimers::kProfTimer;
  default:
    return 0;
  }
}

int interval_timer_signal(int key) {
  switch (key) {
  case SignalTimers::kVirtualTimer:
    return SIGVTALRM;
  case SignalTimers::kProfTimer:
    return SIGPROF;
  default:
    return SIGALRM;
  }
}

// Whether timer_create accepts the clock: the kernel's clocks with timers,
// and the CPU-time clocks of a process or thread (negative ids, checked by
// the kernel against the task they name). The raw and coarse clocks have
// none: EOPNOTSUPP.
long check_clock(clockid_t clock) {
  switch (clock) {
  case CLOCK_REALTIME:
  case CLOCK_MONOTONIC:
  case CLOCK_PROCESS_CPUTIME_ID:
  case CLOCK_THREAD_CPUTIME_ID:
  case CLOCK_BOOTTIME:
  case CLOCK_REALTIME_ALARM:
  case CLOCK_BOOTTIME_ALARM:
  case CLOCK_TAI:
    return 0;
  case CLOCK_MONOTONIC_RAW:
  case CLOCK_REALTIME_COARSE:
  case CLOCK_MONOTONIC_COARSE:
    return -EOPNOTSUPP;
  default:
    return clock < 0 ? 0 : -EINVAL;
  }
}

} // namespace

itimerspec SignalTimers::remaining(const Timer &timer,
                                   const VirtualClock &clock) {
  itimerspec value{};
  if (!timer.deadline)
    return value;
  value.it_interval = to_timespec(timer.interval);
  // An armed timer shows at least 1 ns left (its signal not yet sent).
  value.it_value =
      to_timespec(std::max(*timer.deadline - clock.elapsed(), nanoseconds(1)));
  return value;
}

long SignalTimers::set(int key, const VirtualClock &clock,
                       const itimerspec &value, bool absolute) {
  if (!valid_time(value.it_value) || !valid_time(value.it_interval))
    return -EINVAL;
  Timer &timer = timers_[key];
  timer.overrun = 0;
  timer.last_overrun = 0;
  timer.deadline.reset();
  timer.interval = nanoseconds(0);
  if (is_disarming(value.it_value))
    return 0;
  std::optional<nanoseconds> deadline =
      clock.elapsed() + from_timespec(value.it_value);
  if (absolute)
    deadline = VirtualClock::elapsed_at(timer.clock, value.it_value);
  if (!deadline)
    return -EINVAL;
  timer.deadline = deadline;
  timer.interval = from_timespec(value.it_interval);
  return 0;
}

long SignalTimers::alarm(const VirtualClock &clock, const Registers &regs) {
  const auto seconds = static_cast<unsigned>(regs.arg(0));
  const itimerspec old = remaining(timers_[kRealTimer], clock);
  itimerspec wanted{};
  wanted.it_value.tv_sec = seconds;
  (void)set(kRealTimer, clock, wanted, false);
  // alarm() returns the seconds left of the previous one, rounded to the
  // nearest (and at least 1 if any time was left).
  long left = old.it_value.tv_sec;
  const long micros = old.it_value.tv_nsec / 1000;
  if ((left == 0 && old.it_value.tv_nsec != 0) || micros >= 500000)
    ++left;
  return left;
}

long SignalTimers::setitimer(ProcessAccess &tracee, const VirtualClock &clock,
                             const Registers &regs) {
  const int key = interval_timer_key(regs.arg(0));
  if (key == 0)
    return -EINVAL;
  // A null new value disarms the timer (Linux accepts it, with a warning).
  itimerval wanted{};
  if (const auto value = regs.arg_ptr<itimerval>(1); !value.is_null()) {
    auto read = tracee.read(value);
    if (!read)
      return -EFAULT;
    wanted = *read;
  }
  Timer &timer = timers_[key];
  timer.signal = interval_timer_signal(key);
  const itimerspec old = remaining(timer, clock);
  const itimerspec value{from_timeval(wanted.it_interval),
                         from_timeval(wanted.it_value)};
  if (wanted.it_value.tv_usec < 0 || wanted.it_value.tv_usec >= 1000000 ||
      wanted.it_interval.tv_usec < 0 || wanted.it_interval.tv_usec >= 1000000)
    return -EINVAL;
  if (const long result = set(key, clock, value, false); result != 0)
    return result;
  if (const auto old_value = regs.arg_ptr<itimerval>(2);
      !old_value.is_null() &&
      !tracee
           .write(old_value, itimerval{to_timeval(old.it_interval),
                                       to_timeval(old.it_value)})
           .ok())
    return -EFAULT;
  return 0;
}

long SignalTimers::getitimer(ProcessAccess &tracee, const VirtualClock &clock,
                             const Registers &regs) const {
  const int key = interval_timer_key(regs.arg(0));
  if (key == 0)
    return -EINVAL;
  itimerspec now{};
  if (const auto timer = timers_.find(key); timer != timers_.end())
    now = remaining(timer->second, clock);
  const itimerval value{to_timeval(now.it_interval), to_timeval(now.it_value)};
  return tracee.write(regs.arg_ptr<itimerval>(1), value).ok() ? 0 : -EFAULT;
}

long SignalTimers::create(ProcessAccess &tracee, const Registers &regs) {
  const auto clock = static_cast<clockid_t>(regs.arg(0));
  if (const long refused = check_clock(clock); refused != 0)
    return refused;
  const int id = next_id_;
  Timer timer;
  timer.clock = clock;
  timer.value.sival_int = id;
  if (const auto event = regs.arg_ptr<sigevent>(1); !event.is_null()) {
    auto read = tracee.read(event);
    if (!read)
      return -EFAULT;
    timer.notify = read->sigev_notify;
    timer.signal = read->sigev_signo;
    timer.value = read->sigev_value;
    timer.thread = read->_sigev_un._tid;
    // SIGEV_THREAD is glibc's: the kernel sends it to the process.
    if (timer.notify != SIGEV_NONE && timer.notify != SIGEV_SIGNAL &&
        timer.notify != SIGEV_THREAD && timer.notify != SIGEV_THREAD_ID)
      return -EINVAL;
    if (timer.notify != SIGEV_NONE &&
        (timer.signal <= 0 || timer.signal > SIGRTMAX))
      return -EINVAL;
  }
  if (!tracee.write(regs.arg_ptr<int>(2), id).ok())
    return -EFAULT;
  timers_[id] = timer;
  ++next_id_;
  return 0;
}

const SignalTimers::Timer *
SignalTimers::posix_timer(const Registers &regs) const {
  const auto id = static_cast<int>(regs.arg(0));
  const auto timer = timers_.find(id);
  return id < 0 || timer == timers_.end() ? nullptr : &timer->second;
}

long SignalTimers::settime(ProcessAccess &tracee, const VirtualClock &clock,
                           const Registers &regs) {
  const Timer *timer = posix_timer(regs);
  if (timer == nullptr)
    return -EINVAL;
  auto wanted = tracee.read(regs.arg_ptr<itimerspec>(2));
  if (!wanted)
    return -EFAULT;
  const itimerspec old = remaining(*timer, clock);
  if (const long result = set(static_cast<int>(regs.arg(0)), clock, *wanted,
                              (regs.arg(1) & TIMER_ABSTIME) != 0);
      result != 0)
    return result;
  if (const auto old_value = regs.arg_ptr<itimerspec>(3);
      !old_value.is_null() && !tracee.write(old_value, old).ok())
    return -EFAULT;
  return 0;
}

long SignalTimers::gettime(ProcessAccess &tracee, const VirtualClock &clock,
                           const Registers &regs) const {
  const Timer *timer = posix_timer(regs);
  if (timer == nullptr)
    return -EINVAL;
  return tracee.write(regs.arg_ptr<itimerspec>(1), remaining(*timer, clock))
                 .ok()
             ? 0
             : -EFAULT;
}

long SignalTimers::getoverrun(const Registers &regs) const {
  const Timer *timer = posix_timer(regs);
  return timer == nullptr ? -EINVAL : timer->last_overrun;
}

long SignalTimers::remove(const Registers &regs) {
  if (posix_timer(regs) == nullptr)
    return -EINVAL;
  timers_.erase(static_cast<int>(regs.arg(0)));
  return 0;
}

bool SignalTimers::due(const VirtualClock &clock) const {
  return std::ranges::any_of(timers_, [&](const auto &entry) {
    return entry.second.deadline && *entry.second.deadline <= clock.elapsed();
  });
}

std::vector<TimerSignal> SignalTimers::fire_due(const VirtualClock &clock) {
  std::vector<std::pair<nanoseconds, int>> expired;
  for (const auto &[key, timer] : timers_)
    if (timer.deadline && *timer.deadline <= clock.elapsed())
      expired.emplace_back(*timer.deadline, key);
  std::ranges::sort(expired);
  std::vector<TimerSignal> signals;
  for (const auto &[deadline, key] : expired) {
    Timer &timer = timers_.at(key);
    long expirations = 1;
    if (timer.interval.count() > 0) {
      expirations += (clock.elapsed() - deadline) / timer.interval;
      timer.deadline = deadline + timer.interval * expirations;
    } else {
      timer.deadline.reset();
    }
    if (timer.notify == SIGEV_NONE)
      continue;
    const long missed = timer.pending ? expirations : expirations - 1;
    timer.overrun = static_cast<int>(
        std::min<long>(INT_MAX, static_cast<long>(timer.overrun) + missed));
    if (timer.pending)
      continue;
    timer.pending = true;
    TimerSignal signal;
    signal.key = key;
    signal.signal = timer.signal;
    if (timer.notify == SIGEV_THREAD_ID)
      signal.thread = timer.thread;
    signals.push_back(signal);
  }
  return signals;
}

void SignalTimers::sent(pid_t tid, int key, int signal) {
  sent_.push_back({tid, key, signal});
}

void SignalTimers::dropped(int key) {
  if (const auto timer = timers_.find(key); timer != timers_.end()) {
    timer->second.pending = false;
    timer->second.overrun = 0;
  }
}

bool SignalTimers::awaits(pid_t tid, int signal) const {
  return std::ranges::any_of(sent_, [&](const Sent &entry) {
    return entry.tid == tid && entry.signal == signal;
  });
}

std::optional<siginfo_t> SignalTimers::delivered(pid_t tid, int signal) {
  const auto sent = std::ranges::find_if(sent_, [&](const Sent &entry) {
    return entry.tid == tid && entry.signal == signal;
  });
  if (sent == sent_.end())
    return std::nullopt;
  const int key = sent->key;
  sent_.erase(sent);
  siginfo_t info{};
  info.si_signo = signal;
  info.si_code = SI_KERNEL;
  const auto timer = timers_.find(key);
  if (timer != timers_.end()) {
    timer->second.pending = false;
    timer->second.last_overrun = std::exchange(timer->second.overrun, 0);
  }
  if (key < 0)
    return info;
  info.si_code = SI_TIMER;
  info.si_timerid = key;
  if (timer != timers_.end()) {
    info.si_overrun = timer->second.last_overrun;
    info._sifields._timer.si_sigval = timer->second.value;
  }
  return info;
}

void SignalTimers::exec() {
  std::erase_if(timers_, [](const auto &entry) { return entry.first >= 0; });
  std::erase_if(sent_, [](const Sent &entry) { return entry.key >= 0; });
  next_id_ = 0;
}

void SignalTimers::append_state(std::vector<std::int64_t> &words) const {
  words.push_back(next_id_);
  for (const auto &[key, timer] : timers_)
    words.insert(words.end(),
                 {key, timer.deadline ? timer.deadline->count() : -1,
                  timer.interval.count(), timer.clock, timer.notify,
                  timer.signal, timer.thread, timer.pending ? 1 : 0,
                  timer.overrun, timer.last_overrun});
  // Signals sent and not yet delivered (a thread blocks them); the thread's
  // id differs from run to run.
  for (const Sent &entry : sent_)
    words.insert(words.end(), {entry.key, entry.signal});
}

std::optional<std::uint64_t> status_signal_set(std::string_view status,
                                               std::string_view field) {
  std::size_t at = 0;
  while (true) {
    at = status.find(field, at);
    if (at == std::string_view::npos)
      return std::nullopt;
    if ((at == 0 || status[at - 1] == '\n') &&
        status.substr(at + field.size()).starts_with(":\t"))
      break;
    at += field.size();
  }
  const std::string_view hex = status.substr(at + field.size() + 2);
  std::uint64_t set = 0;
  const auto parsed =
      std::from_chars(hex.data(), hex.data() + hex.size(), set, 16);
  if (parsed.ec != std::errc{})
    return std::nullopt;
  return set;
}

} // namespace cmc::tracer
