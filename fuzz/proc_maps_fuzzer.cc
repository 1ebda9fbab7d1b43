// libFuzzer harness: the text of /proc/PID/maps and the questions cmc asks
// of it (decoder/proc_maps).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

#include "decoder/proc_maps.h"
#include "util/check.h"

namespace {

using cmc::decoder::Mapping;

bool readable_byte(std::span<const Mapping> maps, std::uint64_t address) {
  for (const Mapping &m : maps)
    if (m.start <= address && address < m.end)
      return m.perms[0] == 'r';
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  // The first 16 bytes are an address and a length to ask about, the rest is
  // the maps text.
  std::uint64_t range[2] = {};
  if (size < sizeof range)
    return 0;
  std::memcpy(range, data, sizeof range);
  const std::string_view text(
      reinterpret_cast<const char *>(data) + sizeof range, size - sizeof range);
  const auto maps = cmc::decoder::parse_maps(text);
  if (!maps)
    return 0;
  for (const Mapping &m : *maps)
    CMC_CHECK(m.perms.size() == 4, "a mapping without four permission bits");
  if (!maps->empty()) {
    const Mapping &first = maps->front();
    (void)cmc::decoder::load_bias(
        *maps, {first.dev_major, first.dev_minor, first.inode}, range[0]);
  }
  const auto [address, length] = range;
  if (cmc::decoder::readable(*maps, address, length) && length != 0) {
    // Only a range that exists can be read: cmc then allocates its length.
    CMC_CHECK(length - 1 <= std::numeric_limits<std::uint64_t>::max() - address,
              "readable() accepts a range that wraps around");
    CMC_CHECK(readable_byte(*maps, address) &&
                  readable_byte(*maps, address + length - 1),
              "readable() accepts a range whose ends are not readable");
  }
  return 0;
}
