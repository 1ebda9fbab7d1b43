#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include "tracer/process/process_access.h"
#include "tracer/time/virtual_clock.h"
#include "util/result.h"

namespace cmc::tracer {

// The target's timerfds, run on the virtual clock. cmc answers
// timerfd_settime and timerfd_gettime itself (the kernel's timer is never
// armed) and, when a tick passes a timer's deadline, sets the descriptor's
// expiration count with TFD_IOC_SET_TICKS: it turns readable at once, the
// target's own read returns the count.
class TimerFds {
public:
  // timerfd_settime(fd, flags, new_value, old_value); returns its result.
  [[nodiscard]] Result<long> settime(ProcessAccess &tracee,
                                     const VirtualClock &clock,
                                     const Registers &regs);
  // timerfd_gettime(fd, curr_value); returns its result.
  [[nodiscard]] Result<long> gettime(ProcessAccess &tracee,
                                     const VirtualClock &clock,
                                     const Registers &regs);
  // Fires every timer whose deadline the clock has reached.
  [[nodiscard]] Result<void> fire_due(const ProcessAccess &tracee,
                                      const VirtualClock &clock);
  // The armed timers' deadlines and intervals, for the fingerprint.
  template <typename Visit> void for_each(Visit visit) const {
    for (const auto &[fd, timer] : timers_)
      visit(fd, timer.deadline, timer.interval);
  }

private:
  struct Timer {
    clockid_t clock = CLOCK_MONOTONIC;
    std::chrono::nanoseconds deadline{0}; // elapsed virtual time
    std::chrono::nanoseconds interval{0}; // zero: one-shot
  };
  [[nodiscard]] static Result<void> fire(const ProcessAccess &tracee, int fd,
                                         std::uint64_t expirations);
  // What timerfd_gettime shows for fd now.
  [[nodiscard]] itimerspec remaining(int fd, const VirtualClock &clock) const;

  std::map<int, Timer> timers_;
};

} // namespace cmc::tracer
