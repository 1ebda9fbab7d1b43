// The search over whole-process states: the process as the state
// (--dedup process), and the region abstraction audited against it
// (--dedup regions): lossy merges counted and the first one named.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fake_executor.h"
#include "search/breadth_first.h"
#include "search/merge_audit.h"
#include "search/property.h"
#include "sticky_kv.h"

namespace cmc::search {
namespace {

using executor::ActionId;
using executor::PathStep;
using executor::StateKind;
using fake::Bytes;
using fake::FakeProcess;
using fake::FakeSystem;
using fake::StepOutcome;
using kv::error_of;
using kv::zeros;

using kv::kCells;
const decoder::Location kScratch{"heap chunk 1 (32 B)", 0};

// kv whose process also holds, in a heap chunk, the last message's
// letter: dead data (the read buffer) that the regions do not show.
StepOutcome set_cell_and_scratch(const Bytes &state, ActionId action) {
  Bytes next = state;
  next.at(action) = std::byte{1};
  next.at(2) = static_cast<std::byte>('a' + action);
  return next;
}

FakeProcess kv_process(StateKind state, std::size_t region_bytes) {
  FakeProcess process;
  process.state = state;
  process.audit = state == StateKind::kRegions;
  process.region_bytes = region_bytes;
  process.pieces = {{".bss of kv", 0, 2}, {kScratch.piece, 2, 1}};
  process.heap.allocator = "fake";
  process.heap.canonical = true;
  process.heap.chunks = 1;
  return process;
}

Options options_for(StateKind state, unsigned jobs = 1) {
  Options options;
  options.state = state;
  options.audit = state == StateKind::kRegions;
  options.jobs = jobs;
  return options;
}

Result<Report> check_kv(FakeSystem &system, const Options &options,
                        const std::vector<RegionLayout> &layout) {
  const NoProperty none;
  return breadth_first(system.factory(), 2, none, layout, options);
}

// Under the regions, [1, 0] (scratch 'a') merges into [0, 1] (scratch
// 'b'), and [0, 1, 0] into [0, 1] again: 2 of the 5 merges join processes
// that differ. The first is named by replaying both paths with images.
TEST(RegionAudit, CountsAndNamesLossyMerges) {
  std::vector<Report> reports;
  for (const unsigned jobs : {1U, 2U, 8U}) {
    FakeSystem kv(zeros(3), set_cell_and_scratch);
    kv.set_process(kv_process(StateKind::kRegions, 2));
    const Result<Report> report =
        check_kv(kv, options_for(StateKind::kRegions, jobs), kCells);
    ASSERT_TRUE(report.ok()) << error_of(report);
    EXPECT_EQ(report->distinct_states, 4U);
    EXPECT_EQ(report->dedup_merges, 5U);
    EXPECT_EQ(report->transitions, 8U);
    ASSERT_TRUE(report->abstraction);
    EXPECT_EQ(report->abstraction->merges, 5U);
    EXPECT_EQ(report->abstraction->lossy_merges, 2U);
    ASSERT_TRUE(report->abstraction->first);
    EXPECT_EQ(report->abstraction->first->kept, (std::vector<PathStep>{0, 1}));
    EXPECT_EQ(report->abstraction->first->merged,
              (std::vector<PathStep>{1, 0}));
    EXPECT_EQ(report->abstraction->first->difference,
              kScratch.describe() + " 'b' vs 'a'");
    // Only the replays that name them keep images: for each lossy merge
    // both paths, and the kept one again to leave out bytes that differ
    // between runs.
    EXPECT_EQ(kv.image_runs(), 6U);
    EXPECT_EQ(report->abstraction->named, 2U);
    EXPECT_EQ(report->abstraction->places,
              (std::map<std::string, std::size_t>{{kScratch.describe(), 2}}));
    reports.push_back(*report);
  }
  for (const Report &report : reports)
    EXPECT_EQ(report.abstraction->first->difference,
              reports[0].abstraction->first->difference);
}

// A stack byte that differs in every run makes every merge lossy, but it
// is not what the abstraction lost: the heap byte is named.
TEST(RegionAudit, NamesNoByteThatDiffersBetweenRuns) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    Bytes next = state;
    next.at(action) = std::byte{1};
    next.at(3) = static_cast<std::byte>('a' + action);
    return next;
  };
  FakeSystem kv(zeros(4), step);
  FakeProcess process = kv_process(StateKind::kRegions, 2);
  process.pieces = {{".bss of kv", 0, 2},
                    {"stack of thread 1", 2, 1},
                    {"heap chunk 1 (32 B)", 3, 1}};
  kv.set_process(process);
  kv.set_noise([](std::size_t run, std::size_t, Bytes &state) {
    state[2] = static_cast<std::byte>(run);
  });
  const Result<Report> report =
      check_kv(kv, options_for(StateKind::kRegions), kCells);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->abstraction->lossy_merges, 5U);
  EXPECT_EQ(report->abstraction->first->kept, (std::vector<PathStep>{0}));
  EXPECT_EQ(report->abstraction->first->merged, (std::vector<PathStep>{0, 0}));
  const decoder::Location stack{"stack of thread 1", 0};
  EXPECT_EQ(report->abstraction->first->difference,
            "only in bytes that differ between two runs of one path too, "
            "such as " +
                stack.describe());
}

// The whole process tells the five states apart that the regions merged.
TEST(ProcessState, DeadDataCostsMergesNeverSoundness) {
  FakeSystem kv(zeros(3), set_cell_and_scratch);
  kv.set_process(kv_process(StateKind::kProcess, 0));
  const Result<Report> report =
      check_kv(kv, options_for(StateKind::kProcess), {});
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_FALSE(report->abstraction);
  EXPECT_TRUE(report->complete);
  // (0,0,0), (1,0,a), (0,1,b), (1,1,b), (1,1,a).
  EXPECT_EQ(report->distinct_states, 5U);
  EXPECT_EQ(report->transitions, 10U);
  EXPECT_EQ(report->dedup_merges, 6U);
  EXPECT_EQ(report->heap.allocator, "fake");
  // The initial state's observation (one of its two runs), then one per
  // transition; 3 bytes each.
  EXPECT_EQ(report->runs_measured, 1U + 10U);
  EXPECT_EQ(report->bytes_read, 3U * (1U + 10U));
}

// Without dead data the whole process reproduces the seed's table.
TEST(ProcessState, KvDiamondWithoutRegions) {
  FakeSystem kv(zeros(3), kv::set_cell);
  kv.set_process(kv_process(StateKind::kProcess, 0));
  const Result<Report> report =
      check_kv(kv, options_for(StateKind::kProcess), {});
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 5U);
  EXPECT_EQ(report->transitions, 8U);
}

// A merge whose state's process was not read is not audited, and the
// count says so: merges 0 of 5.
TEST(RegionAudit, UnreadProcessesAreNotCounted) {
  FakeSystem kv(zeros(3), set_cell_and_scratch);
  FakeProcess process = kv_process(StateKind::kRegions, 2);
  process.audit = false;
  kv.set_process(process);
  const Result<Report> report =
      check_kv(kv, options_for(StateKind::kRegions), kCells);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->dedup_merges, 5U);
  ASSERT_TRUE(report->abstraction);
  EXPECT_EQ(report->abstraction->merges, 0U);
  EXPECT_EQ(report->abstraction->lossy_merges, 0U);
}

// A heap byte that differs between runs is named where it is.
TEST(ProcessState, VolatileBytesNamedByLocation) {
  const auto noisy = [](std::size_t run, std::size_t, Bytes &state) {
    state[2] = static_cast<std::byte>(run);
  };
  FakeSystem kv(zeros(3), kv::set_cell);
  kv.set_process(kv_process(StateKind::kProcess, 0));
  kv.set_noise(noisy);
  EXPECT_EQ(error_of(check_kv(kv, options_for(StateKind::kProcess), {})),
            "nondeterminism: the initial state differs between two runs at " +
                kScratch.describe() +
                " (uninitialised memory or an uncontrolled clock?); "
                "--mask-volatile masks such bytes and lists them");

  FakeSystem masked(zeros(3), kv::set_cell);
  masked.set_process(kv_process(StateKind::kProcess, 0));
  masked.set_noise(noisy);
  Options options = options_for(StateKind::kProcess, 2);
  options.mask_volatile = true;
  const Result<Report> report = check_kv(masked, options, {});
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 5U);
  EXPECT_EQ(report->masked, (std::vector<std::string>{kScratch.describe()}));
  EXPECT_EQ(report->restarts, 1U);
}

// A heap byte that differs now and then: the two runs of the initial
// state agree, the worker's run of [0] (run 2) does not, and two more runs
// agree again; the run after them (run 6) shows the byte.
TEST(ProcessState, BytesThatDifferNowAndThenAreNamed) {
  const auto now_and_then = [](std::size_t run, std::size_t, Bytes &state) {
    state[2] = run % 4 == 2 ? std::byte{1} : std::byte{0};
  };
  FakeSystem kv(zeros(3), kv::set_cell);
  kv.set_process(kv_process(StateKind::kProcess, 0));
  kv.set_noise(now_and_then);
  EXPECT_EQ(error_of(check_kv(kv, options_for(StateKind::kProcess), {})),
            "nondeterminism: the initial state differs between runs at " +
                kScratch.describe() +
                " (now and then); --mask-volatile masks such bytes and lists "
                "them");

  FakeSystem masked(zeros(3), kv::set_cell);
  masked.set_process(kv_process(StateKind::kProcess, 0));
  masked.set_noise(now_and_then);
  Options options = options_for(StateKind::kProcess);
  options.mask_volatile = true;
  const Result<Report> report = check_kv(masked, options, {});
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->masked, (std::vector<std::string>{kScratch.describe()}));
}

// A heap byte that differs between workers (their network namespaces
// were made at different times): the probe's runs of the initial state
// agree (runs 0, 1), the worker's runs of [0] and [1] (2, 3) do not, two
// more runs on the probe and six after them agree (4 to 11); a run on a
// new executor (12) shows the byte.
TEST(ProcessState, BytesThatDifferBetweenWorkersAreNamed) {
  const auto by_worker = [](std::size_t run, std::size_t, Bytes &state) {
    state[2] = run == 2 || run == 3 || run == 12 ? std::byte{1} : std::byte{0};
  };
  FakeSystem kv(zeros(3), kv::set_cell);
  kv.set_process(kv_process(StateKind::kProcess, 0));
  kv.set_noise(by_worker);
  EXPECT_EQ(error_of(check_kv(kv, options_for(StateKind::kProcess), {})),
            "nondeterminism: the initial state differs between workers at " +
                kScratch.describe() +
                " (each runs its targets in a network namespace of its "
                "own); --mask-volatile masks such bytes and lists them");

  FakeSystem masked(zeros(3), kv::set_cell);
  masked.set_process(kv_process(StateKind::kProcess, 0));
  masked.set_noise(by_worker);
  Options options = options_for(StateKind::kProcess);
  options.mask_volatile = true;
  const Result<Report> report = check_kv(masked, options, {});
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->masked, (std::vector<std::string>{kScratch.describe()}));
}

// An executor that reads only the parent state and the state after the
// step: the others' fingerprints are kNotRead.
class LastTwoStates final : public executor::Executor {
public:
  explicit LastTwoStates(FakeSystem &system) : inner_(system) {}
  Result<executor::Observation> run(std::span<const PathStep> path) override {
    Result<executor::Observation> seen = inner_.run(path);
    if (seen && seen->fingerprints.size() > 2)
      std::fill(seen->fingerprints.begin(), seen->fingerprints.end() - 2,
                executor::kNotRead);
    return seen;
  }

private:
  fake::FakeExecutor inner_;
};

TEST(ProcessState, ReplaysCheckOnlyTheStatesRead) {
  FakeSystem kv(zeros(3), kv::set_cell);
  kv.set_process(kv_process(StateKind::kProcess, 0));
  const ExecutorFactory factory = [&kv] {
    return std::make_unique<LastTwoStates>(kv);
  };
  const NoProperty none;
  Options options = options_for(StateKind::kProcess);
  const Result<Report> report = breadth_first(factory, 2, none, {}, options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 5U);
  EXPECT_EQ(report->transitions, 8U);
}

TEST(MergeAudit, DescribesTheDifferingRun) {
  decoder::CanonicalState a;
  a.bytes = {std::byte{'k'}, std::byte{'x'}, std::byte{'y'}, std::byte{'z'}};
  a.pieces = {{"heap chunk 5 (32 B)", 0, 4}};
  decoder::CanonicalState b = a;
  b.bytes[1] = std::byte{'p'};
  b.bytes[2] = std::byte{0};
  const decoder::Location at{"heap chunk 5 (32 B)", 1};
  EXPECT_EQ(describe_difference(a, b, at), at.describe() + " 'xy' vs 'p\\x00'");
  b.pieces = {{"heap chunk 6 (32 B)", 0, 4}};
  EXPECT_EQ(describe_difference(a, b, at),
            "heap chunk 5 (32 B) in one state only");
}

// Every run of differing bytes is named, a run at most 16 bytes long.
TEST(MergeAudit, NamesEachDifferingRun) {
  decoder::CanonicalState a;
  a.bytes.assign(24, std::byte{'a'});
  a.pieces = {{"stack of thread 1", 0, 20}, {"fd 3", 20, 4}};
  decoder::CanonicalState b = a;
  for (std::size_t i = 2; i < 20; ++i)
    b.bytes[i] = std::byte{'b'};
  b.bytes[21] = std::byte{'c'};
  EXPECT_EQ(describe_runs(a, b, decoder::differences(a, b)),
            "stack of thread 1+2 'aaaaaaaaaaaaaaaa' vs 'bbbbbbbbbbbbbbbb'; "
            "stack of thread 1+18 'aa' vs 'bb'; fd 3+1 'a' vs 'c'");
}

} // namespace
} // namespace cmc::search
