#include "decoder/region.h"

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

} // namespace
} // namespace cmc::decoder
