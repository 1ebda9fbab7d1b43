#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <string>
#include <vector>

#include "fake_executor.h"
#include "search/breadth_first.h"
#include "search/nondeterminism.h"
#include "search/property.h"
#include "sticky_kv.h"

namespace cmc::search {
namespace {

using executor::ActionId;
using executor::Fault;
using executor::PathStep;
using fake::Bytes;
using fake::FakeSystem;
using fake::StepOutcome;
using kv::check;
using kv::error_of;
using kv::set_cell;
using kv::set_cell_buggy;
using kv::zeros;

std::vector<RegionLayout> cells_layout(std::size_t n) {
  return {RegionLayout{"cmc_state", 0, n}};
}

void expect_same_report(const Report &a, const Report &b) {
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(a.complete, b.complete);
  EXPECT_EQ(a.distinct_states, b.distinct_states);
  EXPECT_EQ(a.dedup_merges, b.dedup_merges);
  EXPECT_EQ(a.transitions, b.transitions);
  EXPECT_EQ(a.max_depth, b.max_depth);
  EXPECT_EQ(a.counterexample, b.counterexample);
  EXPECT_EQ(a.violation, b.violation);
}

TEST(BreadthFirst, KvDiamondHolds) {
  FakeSystem kv(zeros(2), set_cell);
  const Result<Report> report = check(kv, 2, cells_layout(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kHolds);
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 5U);
  EXPECT_EQ(report->transitions, 8U);
  EXPECT_EQ(report->max_depth, 2U);
  EXPECT_TRUE(report->counterexample.empty());
  EXPECT_TRUE(report->violation.empty());
  EXPECT_GE(report->elapsed_s, 0.0);
  // Two runs of the empty path for the determinism check, then one run per
  // transition: stateless replay, nothing cached.
  EXPECT_EQ(kv.runs(), 2U + 8U);
}

TEST(BreadthFirst, KvBugViolatesSticky) {
  FakeSystem kv(zeros(2), set_cell_buggy);
  const Result<Report> report = check(kv, 2, cells_layout(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kViolated);
  EXPECT_EQ(report->counterexample, (std::vector<PathStep>{1, 0}));
  EXPECT_EQ(report->violation, "sticky: byte 1 of cmc_state went 01 -> 00");
  // Level 1: [0] and [1] are new. Level 2: [0,0] merges, [0,1] is new,
  // [1,0] merges into [0] and is the violation.
  EXPECT_EQ(report->transitions, 5U);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 2U);
  EXPECT_EQ(report->max_depth, 2U);
}

TEST(BreadthFirst, TenCellsIdenticalForAnyJobs) {
  std::vector<Report> reports;
  for (const unsigned jobs : {1U, 2U, 8U}) {
    FakeSystem kv(zeros(10), set_cell);
    Options options;
    options.jobs = jobs;
    const Result<Report> report = check(kv, 10, cells_layout(10), options);
    ASSERT_TRUE(report.ok()) << error_of(report);
    EXPECT_EQ(report->verdict, Verdict::kHolds);
    EXPECT_TRUE(report->complete);
    EXPECT_EQ(report->distinct_states, 1024U);
    EXPECT_EQ(report->transitions, 10240U);
    EXPECT_EQ(report->dedup_merges, 1024U * 10 - 1023);
    EXPECT_EQ(report->max_depth, 10U);
    EXPECT_EQ(kv.concurrent_uses(), 0U);
    EXPECT_EQ(kv.runs(), 2U + 10240U);
    // One executor per worker thread plus the calling thread's own.
    if (jobs == 1) {
      EXPECT_EQ(kv.executors_made(), 2U);
    }
    reports.push_back(*report);
  }
  expect_same_report(reports[0], reports[1]);
  expect_same_report(reports[0], reports[2]);
}

// Coverage is counted in merge order: the same for every -j. Action 1 is
// read whole only from states where cell 0 is set.
TEST(BreadthFirst, CoverageIdenticalForAnyJobs) {
  std::vector<Report> reports;
  for (const unsigned jobs : {1U, 2U, 8U}) {
    FakeSystem kv(zeros(6), set_cell);
    kv.set_effects([](const Bytes &state, ActionId action) {
      executor::StepEffects effects;
      effects.length = 4;
      effects.read = action == 1 && state.at(0) == std::byte{0} ? 0 : 4;
      effects.waits_in = "clock_nanosleep";
      return effects;
    });
    Options options;
    options.jobs = jobs;
    const Result<Report> report = check(kv, 6, cells_layout(6), options);
    ASSERT_TRUE(report.ok()) << error_of(report);
    ASSERT_EQ(report->coverage.size(), 6U);
    // 64 states, each tries every action once.
    EXPECT_EQ(report->coverage[0].transitions, 64U);
    EXPECT_EQ(report->coverage[0].read_whole, 64U);
    EXPECT_EQ(report->coverage[1].transitions, 64U);
    // Action 1 leaves cell 1 set: whole only where the step's state has
    // cell 0 set, which action 1 does not clear (32 of 64).
    EXPECT_EQ(report->coverage[1].read_whole, 32U);
    EXPECT_EQ(report->coverage[1].waits_in, "clock_nanosleep");
    EXPECT_TRUE(report->coverage[0].waits_in.empty());
    reports.push_back(*report);
  }
  for (const Report &report : reports)
    for (std::size_t action = 0; action < 6; ++action) {
      EXPECT_EQ(report.coverage[action].transitions,
                reports[0].coverage[action].transitions);
      EXPECT_EQ(report.coverage[action].read_whole,
                reports[0].coverage[action].read_whole);
    }
}

// Without effects (an executor that does not know) nothing is counted.
TEST(BreadthFirst, NoCoverageWithoutEffects) {
  FakeSystem kv(zeros(2), set_cell);
  const Result<Report> report = check(kv, 2, cells_layout(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_TRUE(report->coverage.empty());
}

// Several violations deep in a wide level: the canonical first must win
// whichever worker finishes first.
TEST(BreadthFirst, ViolationIdenticalForAnyJobs) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    Bytes next = std::get<Bytes>(set_cell(state, action));
    if (action == 7 && state[3] == std::byte{1} && state[5] == std::byte{1})
      next[3] = std::byte{0};
    if (action == 2 && state[8] == std::byte{1} && state[9] == std::byte{1})
      next[9] = std::byte{0};
    return next;
  };
  std::vector<Report> reports;
  for (const unsigned jobs : {1U, 2U, 8U}) {
    FakeSystem kv(zeros(10), step);
    Options options;
    options.jobs = jobs;
    const Result<Report> report = check(kv, 10, cells_layout(10), options);
    ASSERT_TRUE(report.ok()) << error_of(report);
    EXPECT_EQ(report->verdict, Verdict::kViolated);
    EXPECT_EQ(report->counterexample, (std::vector<PathStep>{3, 5, 7}));
    EXPECT_EQ(report->violation, "sticky: byte 3 of cmc_state went 01 -> 00");
    reports.push_back(*report);
  }
  expect_same_report(reports[0], reports[1]);
  expect_same_report(reports[0], reports[2]);
}

TEST(BreadthFirst, DepthBoundCutsTheSearch) {
  FakeSystem kv(zeros(10), set_cell);
  Options options;
  options.max_depth = 3;
  options.jobs = 2;
  const Result<Report> report = check(kv, 10, cells_layout(10), options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kHolds);
  EXPECT_FALSE(report->complete);
  EXPECT_EQ(report->max_depth, 3U);
  // States with at most 3 cells set: 1 + 10 + 45 + 120; those with at most
  // 2 are expanded.
  EXPECT_EQ(report->distinct_states, 176U);
  EXPECT_EQ(report->transitions, (1U + 10 + 45) * 10);
  EXPECT_EQ(report->dedup_merges, 560U - 175);
}

TEST(BreadthFirst, DepthBoundReachedIsIncompleteEvenWithoutNewStates) {
  FakeSystem kv(zeros(2), set_cell);
  Options options;
  options.max_depth = 2;
  const Result<Report> report = check(kv, 2, cells_layout(2), options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_FALSE(report->complete);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->transitions, 6U);
}

TEST(BreadthFirst, DepthZeroRunsOnlyTheInitialState) {
  FakeSystem kv(zeros(2), set_cell);
  Options options;
  options.max_depth = 0;
  const Result<Report> report = check(kv, 2, cells_layout(2), options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_FALSE(report->complete);
  EXPECT_EQ(report->distinct_states, 1U);
  EXPECT_EQ(report->transitions, 0U);
  EXPECT_EQ(report->max_depth, 0U);
}

TEST(BreadthFirst, EmptyAlphabetIsComplete) {
  FakeSystem kv(zeros(2), set_cell);
  const Result<Report> report = check(kv, 0, cells_layout(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->distinct_states, 1U);
  EXPECT_EQ(report->transitions, 0U);
}

TEST(BreadthFirst, StateBoundStopsAddingStates) {
  FakeSystem kv(zeros(10), set_cell);
  Options options;
  options.max_states = 20;
  options.jobs = 2;
  const Result<Report> report = check(kv, 10, cells_layout(10), options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_FALSE(report->complete);
  EXPECT_EQ(report->distinct_states, 20U);
  // Kept: the initial state, the 10 one-cell states and {0, 1}..{0, 9}.
  // Every kept state is expanded; 144 transitions lead to states cut off.
  EXPECT_EQ(report->transitions, 200U);
  EXPECT_EQ(report->dedup_merges, 37U);
  EXPECT_EQ(report->max_depth, 2U);
}

TEST(BreadthFirst, StateBoundNotReachedIsComplete) {
  FakeSystem kv(zeros(2), set_cell);
  Options options;
  options.max_states = 4;
  const Result<Report> report = check(kv, 2, cells_layout(2), options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->distinct_states, 4U);
}

// Action 0 clears cells 1 and 2: [1, 0] and [2, 0] both violate at depth 2.
TEST(BreadthFirst, FirstShortestCounterexampleInActionOrder) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    Bytes next = std::get<Bytes>(set_cell(state, action));
    if (action == 0)
      next[1] = next[2] = std::byte{0};
    return next;
  };
  for (const unsigned jobs : {1U, 8U}) {
    FakeSystem system(zeros(3), step);
    Options options;
    options.jobs = jobs;
    const Result<Report> report = check(system, 3, cells_layout(3), options);
    ASSERT_TRUE(report.ok()) << error_of(report);
    EXPECT_EQ(report->counterexample, (std::vector<PathStep>{1, 0}));
    EXPECT_EQ(report->violation, "sticky: byte 1 of cmc_state went 01 -> 00");
  }
}

// A violation at depth 3 on the lexicographically first path loses to one
// at depth 2 on a later path.
TEST(BreadthFirst, ShorterCounterexampleWins) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    Bytes next = state;
    next[0] = static_cast<std::byte>(std::to_integer<int>(state[0]) + 1);
    next[1] = static_cast<std::byte>(action + 1);
    if (next == Bytes{std::byte{3}, std::byte{1}})
      return Fault{.kind = Fault::Kind::kSignal, .code = SIGSEGV, .step = 0};
    if (next == Bytes{std::byte{2}, std::byte{2}} && state[1] == std::byte{3})
      return Fault{.kind = Fault::Kind::kExit, .code = 1, .step = 0};
    return next;
  };
  FakeSystem system(zeros(2), step);
  const Result<Report> report = check(system, 3, cells_layout(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kViolated);
  EXPECT_EQ(report->counterexample, (std::vector<PathStep>{2, 1}));
  const Fault exit{.kind = Fault::Kind::kExit, .code = 1, .step = 1};
  EXPECT_EQ(report->violation, "target " + exit.describe() + " during step 2");
}

// kv where SET b crashes the server once cell a is set.
TEST(BreadthFirst, CrashIsAViolation) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    if (action == 1 && state[0] == std::byte{1})
      return Fault{.kind = Fault::Kind::kSignal, .code = SIGSEGV, .step = 0};
    return set_cell(state, action);
  };
  FakeSystem kv(zeros(2), step);
  const Result<Report> report = check(kv, 2, cells_layout(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kViolated);
  EXPECT_EQ(report->counterexample, (std::vector<PathStep>{0, 1}));
  const Fault crash{.kind = Fault::Kind::kSignal, .code = SIGSEGV, .step = 1};
  EXPECT_EQ(report->violation, "target " + crash.describe() + " during step 2");
  // [0] and [1] new, [0, 0] merges, [0, 1] crashes and reaches no state.
  EXPECT_EQ(report->transitions, 4U);
  EXPECT_EQ(report->distinct_states, 3U);
  EXPECT_EQ(report->dedup_merges, 1U);
}

TEST(BreadthFirst, FaultOnFirstStepIsAViolation) {
  const auto step = [](const Bytes &, ActionId action) -> StepOutcome {
    if (action == 1)
      return Fault{.kind = Fault::Kind::kHang, .code = 0, .step = 0};
    return zeros(1);
  };
  FakeSystem system(zeros(1), step);
  const Result<Report> report = check(system, 2, cells_layout(1));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->counterexample, (std::vector<PathStep>{1}));
  const Fault hang{.kind = Fault::Kind::kHang, .code = 0, .step = 0};
  EXPECT_EQ(report->violation, "target " + hang.describe() + " during step 1");
}

// Two runs that agree on every region byte but not on a file the target
// wrote: the report names the file.
class FileNoise final : public executor::Executor {
public:
  Result<executor::Observation> run(std::span<const PathStep> path) override {
    executor::Observation seen;
    seen.fingerprints.assign(path.size() + 1, Fingerprint{runs_, 0});
    seen.files_after = {{"./binlog", 7}, {"./log", runs_++}};
    return seen;
  }

private:
  std::uint64_t runs_ = 0;
};

TEST(Nondeterminism, NamesTheFileTwoRunsDisagreeOn) {
  FileNoise executor;
  const Result<executor::Observation> seen =
      replay_twice(executor, std::vector<PathStep>{0}, {}, nullptr);
  ASSERT_FALSE(seen);
  EXPECT_EQ(seen.error().message,
            "nondeterminism: the state after actions [0] differs between two "
            "runs in the file ./log (written from a clock, or left by an "
            "earlier run in a path all runs share?)");
}

TEST(BreadthFirst, NondeterministicInitialStateNamesOffsets) {
  FakeSystem kv(zeros(4), set_cell);
  kv.set_noise([](std::size_t run, std::size_t depth, Bytes &state) {
    if (run == 1 && depth == 0)
      state[0] = state[1] = state[3] = std::byte{0x5a};
  });
  const std::vector<RegionLayout> layout = {{"cmc_state", 0, 2},
                                            {"counter", 2, 2}};
  const Result<Report> report = check(kv, 2, layout);
  EXPECT_EQ(error_of(report),
            "nondeterminism: the initial state differs between two runs at "
            "cmc_state+0, cmc_state+1, counter+1 (uninitialised memory or an "
            "uncontrolled clock?); --mask-volatile masks such bytes and lists "
            "them");
}

// Byte 2 reads an uncontrolled clock once the first message is handled.
TEST(BreadthFirst, NondeterministicLaterStateNamesOffsets) {
  const auto clock = [](std::size_t run, std::size_t depth, Bytes &state) {
    if (depth >= 1)
      state[2] = static_cast<std::byte>(run);
  };
  const std::vector<RegionLayout> layout = {{"cmc_state", 0, 2},
                                            {"clock", 2, 1}};
  for (const unsigned jobs : {1U, 8U}) {
    FakeSystem kv(zeros(3), set_cell);
    kv.set_noise(clock);
    Options options;
    options.jobs = jobs;
    const Result<Report> report = check(kv, 2, layout, options);
    EXPECT_EQ(error_of(report),
              "nondeterminism: the state after actions [0] differs between "
              "two runs at clock+0 (uninitialised memory or an uncontrolled "
              "clock?); --mask-volatile masks such bytes and lists them");
  }
}

// Run 4 is the first of depth 2 ([0, 0]); only it sees a different [0].
TEST(BreadthFirst, NondeterminismThatDoesNotRecur) {
  FakeSystem kv(zeros(2), set_cell);
  kv.set_noise([](std::size_t run, std::size_t depth, Bytes &state) {
    if (run == 4 && depth == 1)
      state[1] = std::byte{7};
  });
  const Result<Report> report = check(kv, 2, cells_layout(2));
  // Two more runs agree, but the run that showed it still names the byte.
  EXPECT_EQ(error_of(report),
            "nondeterminism: the state after actions [0] differs between two "
            "runs at cmc_state+1; --mask-volatile masks such bytes and lists "
            "them");
}

// The step function crashes on its fifth call only, which is the first
// step of [0, 1] (runs: [], [], [0], [1], [0, 0], [0, 1]): a prefix that
// ran cleanly before.
TEST(BreadthFirst, PrefixThatFaultsOnReplayIsNondeterminism) {
  std::atomic<int> calls{0};
  const auto step = [&calls](const Bytes &state, ActionId action) {
    if (++calls == 5)
      return StepOutcome{
          Fault{.kind = Fault::Kind::kSignal, .code = SIGSEGV, .step = 0}};
    return set_cell(state, action);
  };
  FakeSystem kv(zeros(2), step);
  const Result<Report> report = check(kv, 2, cells_layout(2));
  const Fault crash{.kind = Fault::Kind::kSignal, .code = SIGSEGV, .step = 0};
  EXPECT_EQ(error_of(report),
            "nondeterminism: replaying actions [0, 1]: target " +
                crash.describe() +
                " during step 1, which ran without fault before");
}

TEST(BreadthFirst, ExecutorErrorPropagates) {
  const auto step = [](const Bytes &, ActionId) -> StepOutcome {
    return Error{"cmc_state: cannot read 2 bytes at 0x4010"};
  };
  FakeSystem broken(zeros(2), step);
  EXPECT_EQ(error_of(check(broken, 2, cells_layout(2))),
            "cmc_state: cannot read 2 bytes at 0x4010");
}

Bytes only_cell(std::size_t cells, std::size_t set) {
  Bytes state = zeros(cells);
  state.at(set) = std::byte{1};
  return state;
}

TEST(BreadthFirst, FirstExecutorErrorInCanonicalOrderPropagates) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    if (state == only_cell(10, 3) && action == 5)
      return Error{"first"};
    if (state == only_cell(10, 7) && action == 2)
      return Error{"second"};
    return set_cell(state, action);
  };
  for (const unsigned jobs : {1U, 8U}) {
    FakeSystem kv(zeros(10), step);
    Options options;
    options.jobs = jobs;
    EXPECT_EQ(error_of(check(kv, 10, cells_layout(10), options)), "first");
  }
}

TEST(BreadthFirst, TargetThatDoesNotStartIsAnError) {
  FakeSystem kv(zeros(2), set_cell);
  kv.set_start_error(Error{"cannot start ./kv: No such file or directory"});
  EXPECT_EQ(error_of(check(kv, 2, cells_layout(2))),
            "cannot start ./kv: No such file or directory");
  EXPECT_EQ(kv.runs(), 1U);
}

// Progress lines start only once a run has taken a second.
TEST(BreadthFirst, QuickRunPrintsNoProgress) {
  FakeSystem kv(zeros(2), set_cell);
  Options options;
  options.progress = true;
  ::testing::internal::CaptureStderr();
  const Result<Report> report = check(kv, 2, cells_layout(2), options);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(printed, "");
}

TEST(BreadthFirst, TooLargeAnAlphabetIsAnError) {
  FakeSystem kv(zeros(2), set_cell);
  EXPECT_EQ(error_of(check(kv, 70000, cells_layout(2))),
            "70000 steps to try at each state; at most 65536 are supported");
  EXPECT_EQ(kv.runs(), 0U);
}

TEST(Nondeterminism, NamesOffsetsByRegion) {
  const std::vector<RegionLayout> layout = {{"cmc_state", 0, 2},
                                            {"store+1:2", 4, 2}};
  const Bytes first(6, std::byte{0});
  Bytes second = first;
  second[1] = second[3] = second[5] = std::byte{1};
  EXPECT_EQ(describe_differences(first, second, layout),
            "cmc_state+1, state byte 3, store+1:2+1");
  EXPECT_EQ(describe_differences(first, first, layout), "");
}

TEST(Nondeterminism, BoundsTheOffsetsNamed) {
  const Bytes first(12, std::byte{0});
  const Bytes second(13, std::byte{1});
  EXPECT_EQ(describe_differences(first, second, {{"r", 0, 13}}),
            "r+0, r+1, r+2, r+3, r+4, r+5, r+6, r+7, 4 more, the state size "
            "(12 vs 13 bytes)");
}

TEST(Nondeterminism, DescribesPrefixes) {
  EXPECT_EQ(describe_state_after({}), "the initial state");
  const std::vector<PathStep> prefix = {1, 0, 2};
  EXPECT_EQ(describe_state_after(prefix), "the state after actions [1, 0, 2]");
}

} // namespace
} // namespace cmc::search

namespace cmc::search {
namespace {

// A clock that only ticks: action 0 moves the one-byte state on by one.
fake::StepOutcome tick_once(const fake::Bytes &state,
                            executor::ActionId /*action*/) {
  fake::Bytes next = state;
  next.at(0) = static_cast<std::byte>(static_cast<int>(state.at(0)) + 1);
  return next;
}

TEST(BreadthFirst, TicksStopAtMaxTicksAndTheSearchSaysSo) {
  for (const unsigned jobs : {1U, 2U}) {
    fake::FakeSystem clock(fake::Bytes(1), tick_once);
    Options options;
    options.jobs = jobs;
    options.tick = 0;
    options.max_ticks = 2;
    const StickyProperty none({});
    auto report = breadth_first(clock.factory(), 1, none, {}, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_EQ(report->distinct_states, 3U); // 0, 1 and 2 ticks
    EXPECT_EQ(report->transitions, 2U);
    EXPECT_TRUE(report->ticks_cut);
    EXPECT_FALSE(report->complete);
    EXPECT_EQ(report->verdict, Verdict::kHolds);
  }
}

} // namespace
} // namespace cmc::search
