// Inputs the fuzz harnesses (fuzz/) found failing, kept as unit tests.
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "decoder/proc_maps.h"

namespace cmc::decoder {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// fuzz_proc_maps: a range whose end wraps past 2^64 ended "before" its start
// and counted as readable; cmc then allocated its length
// (--region 'cmc_state+1:18446744073709551615').
TEST(FuzzRegression, ReadableRefusesARangeThatWraps) {
  const auto maps = parse_maps(
      "555555554000-555555555000 r--p 00000000 fe:01 1310762 /demo/kv\n");
  ASSERT_TRUE(maps);
  EXPECT_FALSE(readable(*maps, 0x555555554001, kMax));
  EXPECT_FALSE(readable(*maps, 0xff20000055555555, 0x3535000000000000));
  EXPECT_FALSE(readable(*maps, kMax, 2));
  EXPECT_TRUE(readable(*maps, 0x555555554001, 0xfff));
}

} // namespace
} // namespace cmc::decoder
