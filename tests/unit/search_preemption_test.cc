// The search with --preemptions: every step is also taken preempted at each
// of its preemption points, up to the bound, in the same level, in an order
// that does not depend on the number of workers.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "fake_executor.h"
#include "search/breadth_first.h"
#include "search/state_store.h"
#include "sticky_kv.h"

namespace cmc::search {
namespace {

using executor::PathStep;
using fake::Bytes;
using fake::FakeSystem;
using kv::check;
using kv::error_of;
using kv::set_cell;
using kv::zeros;

const std::vector<RegionLayout> kThreeCells = {{"cmc_state", 0, 3}};

TEST(PathStep, ListsItsPointsInOrder) {
  const PathStep plain = 2;
  EXPECT_EQ(plain.preemptions(), 0U);
  EXPECT_TRUE(plain.points().empty());
  const PathStep twice = plain.preempted_at(3).preempted_at(7);
  EXPECT_EQ(twice.action, 2);
  ASSERT_EQ(twice.preemptions(), 2U);
  EXPECT_EQ(twice.points()[0], 3U);
  EXPECT_EQ(twice.points()[1], 7U);
  EXPECT_NE(twice, plain.preempted_at(3));
  const std::vector<PathStep> path{0, twice};
  EXPECT_EQ(executor::describe_path(path), "0, 2 preempted at 3, 7");
}

TEST(StateStore, KeepsTheStepsPreemptionPoints) {
  StateStore store;
  store.add(Fingerprint{1, 1}, StateStore::kNoParent, 0);
  store.add(Fingerprint{2, 2}, 0, PathStep(1).preempted_at(4));
  store.add(Fingerprint{3, 3}, 1, 0);
  EXPECT_EQ(store.path_of(2),
            (std::vector<PathStep>{PathStep(1).preempted_at(4), 0}));
}

// Without --preemptions no step is preempted, whatever points it passes.
TEST(Preemptions, NoneTakesNoPreemptedStep) {
  std::atomic<int> preempted{0};
  FakeSystem system(zeros(3), set_cell);
  system.set_preemption(3, [&](const PathStep &, Bytes &) { ++preempted; });
  const Result<Report> report = check(system, 2, kThreeCells);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->transitions, 8U);
  EXPECT_EQ(preempted.load(), 0);
}

// One action, three points a step: with one preemption the step is taken
// four ways from the initial state; preempted at point 2 it also sets
// cell 2, so it reaches a state of its own, and the others merge.
TEST(Preemptions, OneTriesEveryPointOfAStep) {
  FakeSystem system(zeros(3), set_cell);
  system.set_preemption(3, [](const PathStep &step, Bytes &state) {
    if (step.points()[0] == 2)
      state[2] = std::byte{1};
  });
  Options options;
  options.preemptions = 1;
  options.max_depth = 1;
  const Result<Report> report = check(system, 1, kThreeCells, options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kHolds);
  EXPECT_EQ(report->transitions, 4U);
  EXPECT_EQ(report->distinct_states, 3U);
  EXPECT_EQ(report->dedup_merges, 2U);
}

// Two preemptions: the points after the first, in the run preempted once,
// are tried too: 1 + 3 + 3 runs of the step.
TEST(Preemptions, TwoTryEveryLaterPointAfterTheFirst) {
  std::vector<std::vector<std::uint32_t>> seen;
  std::mutex mutex;
  FakeSystem system(zeros(3), set_cell);
  system.set_preemption(3, [&](const PathStep &step, Bytes &) {
    const std::lock_guard lock(mutex);
    seen.emplace_back(step.points().begin(), step.points().end());
  });
  Options options;
  options.preemptions = 2;
  options.max_depth = 1;
  const Result<Report> report = check(system, 1, kThreeCells, options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->transitions, 7U);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::vector<std::uint32_t>>{
                      {1}, {1, 2}, {1, 3}, {2}, {2, 3}, {3}}));
}

// A bug that needs a preemption (the step preempted at point 3 clears cell
// 0, which the sticky invariant forbids): found in the level of the step,
// the same counterexample for every number of workers.
TEST(Preemptions, FindTheBugThatNeedsOneWithAnyJobs) {
  for (const unsigned jobs : {1U, 2U, 8U}) {
    FakeSystem system(zeros(3), set_cell);
    system.set_preemption(4, [](const PathStep &step, Bytes &state) {
      if (step.points()[0] == 3)
        state[0] = std::byte{0};
    });
    Options options;
    options.preemptions = 1;
    options.jobs = jobs;
    const Result<Report> without = check(system, 2, kThreeCells);
    ASSERT_TRUE(without.ok()) << error_of(without);
    EXPECT_EQ(without->verdict, Verdict::kHolds);
    const Result<Report> report = check(system, 2, kThreeCells, options);
    ASSERT_TRUE(report.ok()) << error_of(report);
    EXPECT_EQ(report->verdict, Verdict::kViolated);
    EXPECT_EQ(report->counterexample,
              (std::vector<PathStep>{0, PathStep(0).preempted_at(3)}));
    EXPECT_EQ(report->violation, "sticky: byte 0 of cmc_state went 01 -> 00");
  }
}

} // namespace
} // namespace cmc::search
