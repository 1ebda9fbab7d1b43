#include "decoder/auxv.h"

#include <elf.h>

#include <array>
#include <cstring>

namespace cmc::decoder {

std::optional<std::uint64_t> auxv_value(std::span<const std::byte> raw,
                                        std::uint64_t type) {
  std::array<std::uint64_t, 2> entry{};
  for (std::size_t at = 0; at + sizeof entry <= raw.size();
       at += sizeof entry) {
    std::memcpy(entry.data(), raw.data() + at, sizeof entry);
    if (entry[0] == AT_NULL)
      break;
    if (entry[0] == type)
      return entry[1];
  }
  return std::nullopt;
}

} // namespace cmc::decoder
