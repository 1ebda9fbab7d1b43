#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "bytes.h"
#include "search/property.h"

namespace cmc::search {
namespace {

using testing::bytes;

const std::vector<RegionLayout> kTwoRegions = {{"cmc_state", 0, 2},
                                               {"store+1:2", 3, 2}};

TEST(StickyProperty, SettingAndKeepingBytesHolds) {
  const StickyProperty sticky(kTwoRegions);
  EXPECT_EQ(sticky.check(bytes({0, 0, 0, 0, 0}), bytes({1, 0, 0, 0, 0})),
            std::nullopt);
  EXPECT_EQ(sticky.check(bytes({1, 1, 0, 1, 0}), bytes({1, 1, 0, 1, 0})),
            std::nullopt);
  EXPECT_EQ(sticky.check(bytes({1, 2, 0, 3, 0}), bytes({9, 8, 0, 7, 6})),
            std::nullopt);
}

TEST(StickyProperty, ClearedByteIsNamedRelativeToItsRegion) {
  const StickyProperty sticky(kTwoRegions);
  EXPECT_EQ(sticky.check(bytes({1, 1, 0, 0, 0}), bytes({1, 0, 0, 0, 0})),
            "sticky: byte 1 of cmc_state went 01 -> 00");
  EXPECT_EQ(sticky.check(bytes({0, 0, 0, 0, 0xab}), bytes({0, 0, 0, 0, 0})),
            "sticky: byte 1 of store+1:2 went ab -> 00");
}

TEST(StickyProperty, FirstClearedByteIsReported) {
  const StickyProperty sticky(kTwoRegions);
  EXPECT_EQ(sticky.check(bytes({0, 0x0a, 0, 0xff, 0}), bytes({0, 0, 0, 0, 0})),
            "sticky: byte 1 of cmc_state went 0a -> 00");
}

TEST(StickyProperty, BytesOutsideTheRegionsAreIgnored) {
  const StickyProperty sticky(kTwoRegions);
  EXPECT_EQ(sticky.check(bytes({0, 0, 1, 0, 0}), bytes({0, 0, 0, 0, 0})),
            std::nullopt);
}

TEST(NoProperty, AcceptsEveryTransition) {
  const NoProperty none;
  EXPECT_EQ(none.check(bytes({1, 1}), bytes({0, 0})), std::nullopt);
}

TEST(MakeProperty, KnowsTheBuiltIns) {
  const std::vector<RegionLayout> layout = {{"cmc_state", 0, 1}};
  const auto sticky = make_property("sticky", layout);
  ASSERT_NE(sticky, nullptr);
  EXPECT_EQ(sticky->check(bytes({1}), bytes({0})),
            "sticky: byte 0 of cmc_state went 01 -> 00");
  const auto none = make_property("none", layout);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->check(bytes({1}), bytes({0})), std::nullopt);
  EXPECT_EQ(make_property("monotone", layout), nullptr);
}

} // namespace
} // namespace cmc::search

namespace cmc::search {
namespace {

TEST(Exclusive, AllowsOneSetByteAndNamesTwo) {
  const std::vector<RegionLayout> layout{{"held", 0, 3}, {"other", 3, 1}};
  const ExclusiveProperty exclusive(layout);
  const std::vector<std::byte> none(4);
  std::vector<std::byte> one(4);
  one[1] = std::byte{1};
  std::vector<std::byte> two = one;
  two[3] = std::byte{7};
  EXPECT_FALSE(exclusive.check(none, one));
  EXPECT_EQ(exclusive.check(one, two),
            "exclusive: byte 1 of held and byte 0 of other are both set");
}

} // namespace
} // namespace cmc::search

namespace cmc::search {
namespace {

TEST(ForbiddenResponse, MatchesAnywhereInWhatAnyClientReceived) {
  const ForbiddenResponse forbid("^-ERR|BUSY");
  const std::vector<std::string> fine{"+OK\r\n", ""};
  EXPECT_FALSE(forbid.check_response(fine));
  const std::vector<std::string> busy{"+OK\r\n", "+OK\r\nBUSY\n"};
  EXPECT_EQ(forbid.check_response(busy),
            "forbidden response: \"+OK\\r\\nBUSY\\n\" matches /^-ERR|BUSY/");
}

// Checks a property over the whole path: a violation once the path is
// longer than limit.
class LongerThan final : public Property {
public:
  explicit LongerThan(std::size_t limit) : limit_(limit) {}
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> /*before*/,
        std::span<const std::byte> /*after*/) const override {
    return std::nullopt;
  }
  [[nodiscard]] std::optional<std::string>
  check_path(const PathView &path) const override {
    if (path.path.size() <= limit_)
      return std::nullopt;
    return "longer than " + std::to_string(limit_);
  }
  [[nodiscard]] bool needs_path() const override { return true; }

private:
  std::size_t limit_;
};

TEST(AllOf, NamesTheFirstBrokenPartAndNeedsThePathIfOneDoes) {
  const std::vector<RegionLayout> layout{{"cells", 0, 1}};
  std::vector<std::unique_ptr<Property>> parts;
  parts.push_back(std::make_unique<StickyProperty>(layout));
  parts.push_back(std::make_unique<ForbiddenResponse>("BUSY"));
  const AllOf without_path(std::move(parts));
  EXPECT_FALSE(without_path.needs_path());
  const std::vector<std::byte> set{std::byte{1}};
  const std::vector<std::byte> clear{std::byte{0}};
  EXPECT_TRUE(without_path.check(set, clear));
  EXPECT_FALSE(without_path.check(clear, set));
  const std::vector<std::string> busy{"BUSY\n"};
  EXPECT_TRUE(without_path.check_response(busy));

  parts.clear();
  parts.push_back(std::make_unique<NoProperty>());
  parts.push_back(std::make_unique<LongerThan>(1));
  const AllOf with_path(std::move(parts));
  EXPECT_TRUE(with_path.needs_path());
  const std::vector<executor::PathStep> one{0};
  const std::vector<executor::PathStep> two{0, 1};
  EXPECT_FALSE(with_path.check_path({one, {}, {}}));
  EXPECT_EQ(with_path.check_path({two, {}, {}}), "longer than 1");
}

} // namespace
} // namespace cmc::search
