#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_executor.h"
#include "search/property.h"
#include "search/random_walk.h"
#include "sticky_kv.h"

namespace cmc::search {
namespace {

using executor::ActionId;
using executor::PathStep;
using fake::Bytes;
using fake::FakeSystem;
using fake::StepOutcome;

// Three cells and a fourth action that changes nothing. Action 2 clears
// cell 0 once cells 0 and 1 are set, and action 1 sets cell 1 only once
// cell 0 is: the sticky cells break after 0, 1, 2 in that order only.
StepOutcome walk_ordering_bug(const Bytes &state, ActionId action) {
  Bytes next = std::get<Bytes>(kv::set_cell(state, action));
  if (action == 1 && state[0] == std::byte{0})
    next[1] = std::byte{0};
  if (action == 2 && state[0] != std::byte{0} && state[1] != std::byte{0})
    next[0] = std::byte{0};
  return next;
}

const std::vector<RegionLayout> kWalkCells = {{"cmc_state", 0, 3}};

std::vector<PathStep> walk_path(std::initializer_list<ActionId> actions) {
  return {actions.begin(), actions.end()};
}

Result<WalkReport> walk_fake(FakeSystem &system, unsigned jobs,
                             std::uint64_t seed = 0) {
  const StickyProperty sticky(kWalkCells);
  WalkOptions options;
  options.runs = 50;
  options.depth = 10;
  options.seed = seed;
  options.search.jobs = jobs;
  return random_walks(system.factory(), 4, sticky, kWalkCells, options);
}

TEST(Minimise, DropsEveryStepTheViolationDoesNotNeed) {
  FakeSystem system(kv::zeros(3), walk_ordering_bug);
  const StickyProperty sticky(kWalkCells);
  auto executor = system.factory()();
  const auto found =
      first_failure(*executor, sticky, walk_path({3, 0, 3, 1, 3, 3, 2, 1}));
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  // Cut at the step that broke the property.
  EXPECT_EQ((*found)->path, walk_path({3, 0, 3, 1, 3, 3, 2}));
  std::size_t runs = 0;
  const Result<Failure> minimised = minimise(*executor, sticky, **found, &runs);
  ASSERT_TRUE(minimised.ok()) << minimised.error().message;
  EXPECT_EQ(minimised->path, walk_path({0, 1, 2}));
  EXPECT_EQ(minimised->violation, "sticky: byte 0 of cmc_state went 01 -> 00");
  // Each dropped step cost a run, and each of the three it kept one more
  // per pass: two passes over what was left.
  EXPECT_GE(runs, 4U + 3U);
  EXPECT_LE(runs, 4U + 2 * 3U + 3U);
}

TEST(Minimise, APathThatHoldsHasNoFailure) {
  FakeSystem system(kv::zeros(3), walk_ordering_bug);
  const StickyProperty sticky(kWalkCells);
  auto executor = system.factory()();
  const auto found = first_failure(*executor, sticky, walk_path({1, 2, 0, 3}));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST(RandomWalks, FindTheOrderingBugTheSameWayOnAnyNumberOfWorkers) {
  FakeSystem one(kv::zeros(3), walk_ordering_bug);
  FakeSystem three(kv::zeros(3), walk_ordering_bug);
  const Result<WalkReport> a = walk_fake(one, 1);
  const Result<WalkReport> b = walk_fake(three, 3);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(a->report.verdict, Verdict::kViolated);
  EXPECT_FALSE(a->report.complete);
  EXPECT_EQ(a->report.counterexample, walk_path({0, 1, 2}));
  ASSERT_TRUE(a->violating_walk.has_value());
  EXPECT_EQ(a->walks, *a->violating_walk + 1);
  EXPECT_GE(a->found.size(), 3U);
  EXPECT_EQ(a->found, b->found);
  EXPECT_EQ(a->violating_walk, b->violating_walk);
  EXPECT_EQ(a->steps, b->steps);
  EXPECT_EQ(a->report.counterexample, b->report.counterexample);
  EXPECT_EQ(a->report.distinct_states, b->report.distinct_states);
  EXPECT_EQ(a->report.transitions, b->report.transitions);
  EXPECT_EQ(a->report.dedup_merges, b->report.dedup_merges);
}

TEST(RandomWalks, ACorrectSystemHoldsButIsNeverComplete) {
  FakeSystem system(kv::zeros(3), kv::set_cell);
  const Result<WalkReport> walks = walk_fake(system, 2, 9);
  ASSERT_TRUE(walks.ok()) << walks.error().message;
  EXPECT_EQ(walks->report.verdict, Verdict::kHolds);
  EXPECT_FALSE(walks->report.complete);
  EXPECT_EQ(walks->walks, 50U);
  EXPECT_EQ(walks->steps, 500U);
  EXPECT_EQ(walks->report.transitions, 500U);
  // Eight states of three cells, the walks of ten steps see them all.
  EXPECT_EQ(walks->report.distinct_states, 8U);
  EXPECT_EQ(walks->report.distinct_states + walks->report.dedup_merges,
            500U + 1U);
  EXPECT_FALSE(walks->violating_walk.has_value());
}

TEST(RandomWalks, AnotherSeedTakesOtherWalks) {
  FakeSystem a(kv::zeros(3), walk_ordering_bug);
  FakeSystem b(kv::zeros(3), walk_ordering_bug);
  const Result<WalkReport> first = walk_fake(a, 1, 1);
  const Result<WalkReport> second = walk_fake(b, 1, 2);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->report.verdict, Verdict::kViolated);
  EXPECT_EQ(second->report.verdict, Verdict::kViolated);
  EXPECT_NE(first->found, second->found);
}

} // namespace
} // namespace cmc::search
