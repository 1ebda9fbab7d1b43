#include "search/state_store.h"

#include <gtest/gtest.h>

namespace cmc::search {
namespace {

Fingerprint nth(std::uint64_t n) {
  // Distinct, and with equal low bits for n and n + 2^20: collisions in
  // the table's index must be resolved by the whole fingerprint.
  return Fingerprint{n % (1U << 20), n};
}

TEST(StateStore, FindsEveryStateItAddedAcrossGrowth) {
  StateStore store;
  constexpr std::uint32_t kCount = 100000;
  store.add(nth(0), StateStore::kNoParent, 0);
  for (std::uint32_t i = 1; i < kCount; ++i)
    store.add(nth(i + (i % 2 != 0 ? 0 : std::uint64_t{1} << 20)), i - 1, i % 3);
  EXPECT_EQ(store.size(), kCount);
  for (std::uint32_t i = 1; i < kCount; ++i)
    ASSERT_TRUE(
        store.contains(nth(i + (i % 2 != 0 ? 0 : std::uint64_t{1} << 20))));
  EXPECT_FALSE(store.contains(nth(kCount + 7)));
  EXPECT_FALSE(store.contains(Fingerprint{2, 99}));
}

TEST(StateStore, PathsFollowParentLinks) {
  StateStore store;
  store.add(nth(10), StateStore::kNoParent, 0);
  store.add(nth(11), 0, 1);
  store.add(nth(12), 0, 0);
  store.add(nth(13), 1, 0);
  EXPECT_EQ(store.path_of(0), std::vector<executor::PathStep>{});
  EXPECT_EQ(store.path_of(3), (std::vector<executor::PathStep>{1, 0}));
  EXPECT_EQ(store.fingerprints_along(3),
            (std::vector<Fingerprint>{nth(10), nth(11), nth(13)}));
}

// An audited state keeps its whole-process fingerprint; states added
// before the first one, or without one, have none.
TEST(StateStore, KeepsProcessFingerprintsGiven) {
  StateStore store;
  store.add(nth(1), StateStore::kNoParent, 0);
  store.add(nth(2), 0, 0, nth(20));
  store.add(nth(3), 0, 1);
  EXPECT_EQ(store.process_of(0), std::nullopt);
  EXPECT_EQ(store.process_of(1), nth(20));
  EXPECT_EQ(store.process_of(2), std::nullopt);
}

TEST(StateStore, CostsUnderFortyBytesPerState) {
  StateStore store;
  constexpr std::uint32_t kCount = 1 << 18;
  store.add(nth(0), StateStore::kNoParent, 0);
  for (std::uint32_t i = 1; i < kCount; ++i)
    store.add(Fingerprint{i * 0x9e3779b97f4a7c15ULL, i}, 0, 0);
  EXPECT_LT(store.memory_bytes() / kCount, 40U);
}

TEST(StateStoreDeathTest, RefusesADuplicate) {
  StateStore store;
  store.add(nth(1), StateStore::kNoParent, 0);
  EXPECT_DEATH(store.add(nth(1), 0, 0), "state added twice");
}

} // namespace
} // namespace cmc::search
