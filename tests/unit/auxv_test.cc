#include "decoder/auxv.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace cmc::decoder {
namespace {

std::vector<std::byte> auxv(std::vector<std::uint64_t> words) {
  std::vector<std::byte> raw(words.size() * sizeof(std::uint64_t));
  std::memcpy(raw.data(), words.data(), raw.size());
  return raw;
}

TEST(Auxv, FindsAnEntryBeforeTheEnd) {
  const auto raw = auxv(
      {AT_PAGESZ, 4096, AT_ENTRY, 0x555555555040, AT_NULL, 0, AT_RANDOM, 99});
  EXPECT_EQ(auxv_value(raw, AT_ENTRY), 0x555555555040U);
  EXPECT_EQ(auxv_value(raw, AT_PAGESZ), 4096U);
  // Nothing after AT_NULL counts.
  EXPECT_FALSE(auxv_value(raw, AT_RANDOM));
  EXPECT_FALSE(auxv_value(auxv({AT_ENTRY}), AT_ENTRY));
}

} // namespace
} // namespace cmc::decoder
