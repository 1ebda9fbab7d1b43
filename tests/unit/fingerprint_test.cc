#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "util/fingerprint.h"

namespace cmc {
namespace {

TEST(Fingerprint, EqualBytesGiveEqualFingerprints) {
  const std::vector<std::byte> a(64, std::byte{0x42});
  const std::vector<std::byte> b(64, std::byte{0x42});
  EXPECT_EQ(fingerprint_of(a), fingerprint_of(b));
  EXPECT_EQ(fingerprint_of({}), fingerprint_of({}));
}

TEST(Fingerprint, DifferentBytesGiveDifferentFingerprints) {
  const std::vector<std::byte> a(64, std::byte{0});
  std::vector<std::byte> one_bit = a;
  one_bit[63] = std::byte{1};
  const std::vector<std::byte> longer(65, std::byte{0});
  EXPECT_NE(fingerprint_of(a), fingerprint_of(one_bit));
  EXPECT_NE(fingerprint_of(a), fingerprint_of(longer));
  EXPECT_NE(fingerprint_of(a), fingerprint_of({}));
  // Both halves carry information.
  const Fingerprint fa = fingerprint_of(a);
  const Fingerprint fb = fingerprint_of(one_bit);
  EXPECT_NE(fa.low, fb.low);
  EXPECT_NE(fa.high, fb.high);
}

TEST(Fingerprint, ExtraStateChangesTheFingerprintAndZeroIsNone) {
  const std::vector<std::byte> a(16, std::byte{7});
  EXPECT_EQ(fingerprint_of(a, 0), fingerprint_of(a));
  EXPECT_NE(fingerprint_of(a, 10'000'000'000), fingerprint_of(a));
  EXPECT_NE(fingerprint_of(a, 1), fingerprint_of(a, 2));
  EXPECT_EQ(fingerprint_of(a, 5), fingerprint_of(a, 5));
}

TEST(Fingerprint, HexIs32LowercaseDigits) {
  const Fingerprint f{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  EXPECT_EQ(f.hex(), "fedcba98765432100123456789abcdef");
}

TEST(CollisionProbability, TinyForSmallSearches) {
  const double p = collision_probability(4);
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1e-36);
  EXPECT_DOUBLE_EQ(p, 16.0 / std::ldexp(1.0, 129));
}

TEST(CollisionProbability, GrowsWithTheNumberOfStates) {
  EXPECT_EQ(collision_probability(0), 0.0);
  double previous = collision_probability(1);
  for (const std::uint64_t n : {2ULL, 4ULL, 1000ULL, 1ULL << 32, 1ULL << 60}) {
    EXPECT_GT(collision_probability(n), previous) << n;
    previous = collision_probability(n);
  }
}

} // namespace
} // namespace cmc
