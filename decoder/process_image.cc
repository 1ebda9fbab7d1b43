#include "decoder/process_image.h"

#include <algorithm>
#include <cstring>

namespace cmc::decoder {

std::optional<std::uint64_t> word_at(const ProcessImage &image,
                                     std::uint64_t address) {
  const auto &memory = image.memory;
  auto found = std::upper_bound(
      memory.begin(), memory.end(), address,
      [](std::uint64_t a, const MemorySegment &s) { return a < s.address; });
  if (found == memory.begin())
    return std::nullopt;
  --found;
  if (address - found->address + 8 > found->bytes.size())
    return std::nullopt;
  std::uint64_t value = 0;
  std::memcpy(&value, found->bytes.data() + (address - found->address), 8);
  return value;
}

std::optional<std::uint64_t> pointer_guard(const ProcessImage &image) {
  constexpr std::uint64_t kPointerGuard = 0x30;
  if (image.threads.empty())
    return std::nullopt;
  return word_at(image,
                 image.threads.front().registers.fs_base + kPointerGuard);
}

} // namespace cmc::decoder
