#include "decoder/region.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cmc::decoder {
namespace {

TEST(RegionSpec, ParsesTheThreeForms) {
  auto whole = parse_region_spec("cmc_state");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->symbol, "cmc_state");
  EXPECT_EQ(whole->offset, 0U);
  EXPECT_FALSE(whole->length);

  auto sized = parse_region_spec("store:3");
  ASSERT_TRUE(sized.ok());
  EXPECT_EQ(sized->symbol, "store");
  EXPECT_EQ(sized->length, 3U);

  auto slice = parse_region_spec("store+0x1:2");
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(slice->symbol, "store");
  EXPECT_EQ(slice->offset, 1U);
  EXPECT_EQ(slice->length, 2U);
  EXPECT_EQ(slice->text, "store+0x1:2");
}

TEST(RegionSpec, RejectsMalformedSpecs) {
  EXPECT_FALSE(parse_region_spec("").ok());
  EXPECT_FALSE(parse_region_spec(":4").ok());
  EXPECT_FALSE(parse_region_spec("store:").ok());
  EXPECT_FALSE(parse_region_spec("store:0").ok());
  EXPECT_FALSE(parse_region_spec("store+x:2").ok());
  EXPECT_FALSE(parse_region_spec("store:2k").ok());
}

TEST(Region, ResolvesAgainstTheFixture) {
  auto elf = ElfFile::open(std::string(CMC_FIXTURE_DIR) + "/symbols");
  ASSERT_TRUE(elf.ok());
  const auto cells = elf->find_symbol("fixture_cells");
  ASSERT_TRUE(cells);

  auto whole = resolve_region(*parse_region_spec("fixture_cells"), *elf);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->link_address, cells->value);
  EXPECT_EQ(whole->length, 6U);

  auto tail = resolve_region(*parse_region_spec("fixture_cells+4"), *elf);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->link_address, cells->value + 4);
  EXPECT_EQ(tail->length, 2U);

  auto unknown = resolve_region(*parse_region_spec("nope"), *elf);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("symbol 'nope' is not in"),
            std::string::npos);
  EXPECT_FALSE(
      resolve_region(*parse_region_spec("fixture_cells+6"), *elf).ok());
}

// OFF+LEN past 2^64 wrapped around to the byte before the symbol.
TEST(RegionSpec, RejectsArithmeticThatOverflows) {
  const auto wraps = parse_region_spec("cmc_state+18446744073709551615:2");
  ASSERT_FALSE(wraps.ok());
  EXPECT_NE(wraps.error().message.find("past the end of the address space"),
            std::string::npos)
      << wraps.error().message;
  EXPECT_FALSE(parse_region_spec("s+0x8000000000000000:0x8000000000000000"));
  EXPECT_TRUE(parse_region_spec("s+0x7fffffffffffffff:0x8000000000000000"));
  EXPECT_FALSE(parse_region_spec("s+18446744073709551616:1"));
  EXPECT_FALSE(parse_region_spec("s:18446744073709551616"));
}

// A region reads the mapping of its symbol's segment, nothing past it.
TEST(Region, StaysInsideTheSymbolsSegment) {
  auto elf = ElfFile::open(std::string(CMC_FIXTURE_DIR) + "/symbols");
  ASSERT_TRUE(elf.ok());
  const auto resolve = [&](const std::string &text) {
    return resolve_region(*parse_region_spec(text), *elf);
  };
  for (const char *text :
       {"fixture_cells+1:18446744073709551614", "fixture_cells:0x10000000",
        "fixture_cells+0x10000000:1", "fixture_cells+0xffffffffffffff00:1"}) {
    const auto region = resolve(text);
    ASSERT_FALSE(region.ok()) << text;
    EXPECT_NE(region.error().message.find("does not fit in the loaded "
                                          "segment"),
              std::string::npos)
        << region.error().message;
  }
  // Up to the last byte of the segment is fine.
  const auto cells = elf->find_symbol("fixture_cells");
  ASSERT_TRUE(cells);
  for (const LoadSegment &load : elf->loads())
    if (cells->value >= load.vaddr && cells->value < load.vaddr + load.memsz) {
      const std::uint64_t room = load.vaddr + load.memsz - cells->value;
      EXPECT_TRUE(resolve(fmt::format("fixture_cells:{}", room)).ok());
      EXPECT_FALSE(resolve(fmt::format("fixture_cells:{}", room + 1)).ok());
      EXPECT_TRUE(resolve(fmt::format("fixture_cells+{}:1", room - 1)).ok());
    }
}

} // namespace
} // namespace cmc::decoder
