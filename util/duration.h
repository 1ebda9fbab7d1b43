#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cmc {

// The longest duration cmc takes: 100 years. The target's virtual clocks
// count nanoseconds in an int64 from 2026 (about 290 years of room), so
// a duration, or ticks that add up to one, stay below it.
inline constexpr std::chrono::nanoseconds kLongestDuration =
    std::chrono::hours(24 * 365 * 100);

// A positive duration of at most kLongestDuration, written as a whole
// number and a unit: ns, us, ms, s, m or h ("10s", "250ms").
[[nodiscard]] Result<std::chrono::nanoseconds>
parse_duration(std::string_view text);

// The duration in the largest of those units that writes it whole.
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds duration);

// The longest time a step may take (--step-timeout): a day.
inline constexpr std::chrono::seconds kLongestTimeout{86400};

// A number of seconds as a timeout, to the millisecond: finite, at least
// 1 ms and at most at_most (the check of --step-timeout 0.5).
[[nodiscard]] Result<std::chrono::milliseconds>
timeout_of_seconds(double seconds,
                   std::chrono::seconds at_most = kLongestTimeout);

} // namespace cmc
