// libFuzzer harness: the C escapes of -m arguments (util/escape).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/check.h"
#include "util/escape.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  // Any bytes printed as escapes read back as the same bytes.
  const auto encoded = cmc::decode_escapes(cmc::encode_escapes(input));
  CMC_CHECK(encoded && *encoded == input, "encode_escapes does not round-trip");
  if (auto decoded = cmc::decode_escapes(input)) {
    const auto again = cmc::decode_escapes(cmc::encode_escapes(*decoded));
    CMC_CHECK(again && *again == *decoded, "decoded bytes do not round-trip");
  }
  const std::string line = cmc::last_line(input, 16);
  CMC_CHECK(line.size() <= 16 + 3, "last_line is longer than its bound");
  return 0;
}
