#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>

namespace cmc::tracer {

// The target's time: a fixed instant at start, moved only by the search's
// tick steps. Every clock the target can read derives from elapsed().
class VirtualClock {
public:
  // CLOCK_REALTIME at start: 2026-01-01T00:00:00Z.
  static constexpr std::chrono::seconds kRealtimeStart{1767225600};
  // CLOCK_MONOTONIC and CLOCK_BOOTTIME at start (an uptime of 1000 s).
  static constexpr std::chrono::seconds kMonotonicStart{1000};
  // The TSC frequency of a clock made without one: 1 GHz.
  static constexpr std::uint64_t kDefaultTscKhz = 1'000'000;

  // A clock whose time stamp counter ticks tsc_khz thousand times per
  // virtual second.
  explicit VirtualClock(std::uint64_t tsc_khz = kDefaultTscKhz)
      : tsc_khz_(tsc_khz) {}

  [[nodiscard]] std::chrono::nanoseconds elapsed() const { return elapsed_; }
  void advance(std::chrono::nanoseconds by) { elapsed_ += by; }

  // The reading of clock id, or nothing for a clock Linux does not have.
  // CPU-time clocks read the elapsed virtual time.
  [[nodiscard]] std::optional<timespec> now(clockid_t id) const;
  // The elapsed virtual time at which clock id shows absolute.
  [[nodiscard]] static std::optional<std::chrono::nanoseconds>
  elapsed_at(clockid_t id, const timespec &absolute);
  // The time stamp counter: the monotonic clock's nanoseconds (as the
  // kernel's TSC counts from boot) at tsc_khz, rounded down.
  [[nodiscard]] std::uint64_t tsc() const;
  [[nodiscard]] std::uint64_t tsc_khz() const { return tsc_khz_; }

private:
  [[nodiscard]] static std::optional<std::chrono::nanoseconds>
  start_of(clockid_t id);

  std::uint64_t tsc_khz_;
  std::chrono::nanoseconds elapsed_{0};
};

[[nodiscard]] timespec to_timespec(std::chrono::nanoseconds time);
[[nodiscard]] std::chrono::nanoseconds from_timespec(const timespec &time);

} // namespace cmc::tracer
