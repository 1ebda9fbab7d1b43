// libFuzzer harness: durations of --step-timeout and the like
// (util/duration).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/check.h"
#include "util/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const auto duration = cmc::parse_duration(input);
  if (!duration)
    return 0;
  CMC_CHECK(duration->count() > 0, "a parsed duration is not positive");
  // What cmc prints (in reports, replay lines) parses back to the same value.
  const auto again = cmc::parse_duration(cmc::format_duration(*duration));
  CMC_CHECK(again && *again == *duration,
            "format_duration does not round-trip");
  return 0;
}
