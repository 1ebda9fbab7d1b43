#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cmc {

// A positive duration written as a whole number and a unit: ns, us, ms, s,
// m or h ("10s", "250ms").
[[nodiscard]] Result<std::chrono::nanoseconds>
parse_duration(std::string_view text);

// The duration in the largest of those units that writes it whole.
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds duration);

} // namespace cmc
