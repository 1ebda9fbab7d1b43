#include "util/duration.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

namespace cmc {
namespace {

using std::chrono::nanoseconds;

// Largest first.
constexpr std::array<std::pair<std::string_view, std::int64_t>, 6> kUnits{{
    {"h", 3'600'000'000'000},
    {"m", 60'000'000'000},
    {"s", 1'000'000'000},
    {"ms", 1'000'000},
    {"us", 1'000},
    {"ns", 1},
}};

} // namespace

Result<nanoseconds> parse_duration(std::string_view text) {
  std::int64_t count = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), count);
  const std::string_view unit(end, text.data() + text.size() - end);
  if (error == std::errc() && count > 0)
    for (const auto &[name, scale] : kUnits)
      if (unit == name && count <= kLongestDuration.count() / scale)
        return nanoseconds(count * scale);
  return Error{fmt::format(
      "'{}' is not a duration: give a positive whole "
      "number and a unit (ns, us, ms, s, m, h), e.g. "
      "10s, of at most 100 years ({}h)",
      text,
      std::chrono::duration_cast<std::chrono::hours>(kLongestDuration)
          .count())};
}

std::string format_duration(nanoseconds duration) {
  for (const auto &[name, scale] : kUnits)
    if (duration.count() % scale == 0)
      return fmt::format("{}{}", duration.count() / scale, name);
  return fmt::format("{}ns", duration.count());
}

Result<std::chrono::milliseconds>
timeout_of_seconds(double seconds, std::chrono::seconds at_most) {
  // Written so that NaN fails it too.
  if (seconds >= 0.001 && seconds <= static_cast<double>(at_most.count()))
    return std::chrono::milliseconds(std::llround(seconds * 1000));
  return Error{fmt::format("{} is not a timeout: give a number of seconds "
                           "from 0.001 to {}",
                           seconds, at_most.count())};
}

} // namespace cmc
