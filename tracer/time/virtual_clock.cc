#include "tracer/time/virtual_clock.h"

namespace cmc::tracer {

using std::chrono::nanoseconds;

timespec to_timespec(nanoseconds time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  return {static_cast<time_t>(seconds.count()),
          static_cast<long>((time - seconds).count())};
}

nanoseconds from_timespec(const timespec &time) {
  return std::chrono::seconds(time.tv_sec) + nanoseconds(time.tv_nsec);
}

std::optional<nanoseconds> VirtualClock::start_of(clockid_t id) {
  switch (id) {
  case CLOCK_REALTIME:
  case CLOCK_REALTIME_COARSE:
  case CLOCK_REALTIME_ALARM:
    return kRealtimeStart;
  case CLOCK_TAI:
    return kRealtimeStart + std::chrono::seconds(37);
  case CLOCK_MONOTONIC:
  case CLOCK_MONOTONIC_COARSE:
  case CLOCK_MONOTONIC_RAW:
  case CLOCK_BOOTTIME:
  case CLOCK_BOOTTIME_ALARM:
    return kMonotonicStart;
  case CLOCK_PROCESS_CPUTIME_ID:
  case CLOCK_THREAD_CPUTIME_ID:
    return nanoseconds(0);
  default:
    // Negative ids are the CPU-time clocks of a process or thread.
    if (id < 0)
      return nanoseconds(0);
    return std::nullopt;
  }
}

std::optional<timespec> VirtualClock::now(clockid_t id) const {
  const auto start = start_of(id);
  if (!start)
    return std::nullopt;
  return to_timespec(*start + elapsed_);
}

std::optional<nanoseconds> VirtualClock::elapsed_at(clockid_t id,
                                                    const timespec &absolute) {
  const auto start = start_of(id);
  if (!start)
    return std::nullopt;
  return from_timespec(absolute) - *start;
}

std::uint64_t VirtualClock::tsc() const {
  const auto ns = static_cast<unsigned __int128>(
      (std::chrono::duration_cast<nanoseconds>(kMonotonicStart) + elapsed_)
          .count());
  return static_cast<std::uint64_t>(ns * tsc_khz_ / 1'000'000);
}

} // namespace cmc::tracer
