// The search's side of snapshots (--mode snapshot): it counts how each
// transition was taken, and checks the restored runs it is asked to
// against a replay on its probe.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_executor.h"
#include "search/breadth_first.h"
#include "search/property.h"
#include "sticky_kv.h"

namespace cmc::search {
namespace {

using executor::ActionId;
using executor::PathStep;
using fake::FakeSystem;

// Stands for a snapshot executor: each run after its first says it
// restored a saved state, refused one on the way and asks to be checked.
// With wrong, a restored run's last state has cell 0 flipped, as a restore
// that went wrong would leave it. A replay_only() executor (the search's
// probe) runs honestly.
class Restoring final : public executor::Executor {
public:
  Restoring(FakeSystem &system, bool wrong) : system_(system), wrong_(wrong) {}
  Result<executor::Observation> run(std::span<const PathStep> path) override {
    fake::RunRequest request;
    request.mask = mask_;
    Result<executor::Observation> seen = system_.run(path, request);
    if (!seen || replay_only_ || runs_++ == 0)
      return seen;
    seen->restored = true;
    seen->check_restore = true;
    seen->refusals = {"mappings"};
    seen->snapshot_bytes = 4096 * runs_;
    seen->snapshots_kept = runs_;
    if (wrong_ && !path.empty()) {
      seen->after.at(0) ^= std::byte{1};
      seen->fingerprints.back() = fingerprint_of(seen->after);
    }
    return seen;
  }
  void set_mask(std::span<const std::size_t> offsets) override {
    mask_.assign(offsets.begin(), offsets.end());
  }
  void replay_only() override { replay_only_ = true; }

private:
  FakeSystem &system_;
  bool wrong_;
  bool replay_only_ = false;
  std::size_t runs_ = 0;
  std::vector<std::size_t> mask_;
};

Result<Report> check(FakeSystem &kv, bool wrong) {
  const std::vector<RegionLayout> layout{{"cmc_state", 0, 2}};
  const StickyProperty sticky(layout);
  const ExecutorFactory factory = [&kv, wrong] {
    return std::make_unique<Restoring>(kv, wrong);
  };
  return breadth_first(factory, 2, sticky, layout, {});
}

TEST(Snapshots, CountsHowEachTransitionWasTaken) {
  FakeSystem kv(kv::zeros(2), kv::set_cell);
  const Result<Report> report = check(kv, false);
  ASSERT_TRUE(report.ok()) << kv::error_of(report);
  EXPECT_EQ(report->transitions, 8U);
  const SnapshotCounts &counts = report->snapshots;
  EXPECT_EQ(counts.replayed, 1U);
  EXPECT_EQ(counts.restored, 7U);
  EXPECT_EQ(counts.checked, 7U);
  EXPECT_EQ(counts.refusals,
            (std::map<std::string, std::size_t>{{"mappings", 7}}));
  EXPECT_EQ(counts.memory, 4096U * 8); // the largest: after its 8th run
  EXPECT_EQ(counts.kept, 8U);
}

TEST(Snapshots, ARestoreThatDiffersFromReplayStopsTheCheck) {
  FakeSystem kv(kv::zeros(2), kv::set_cell);
  const Result<Report> report = check(kv, true);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().message,
            "nondeterminism: the state after actions [1] differs between a "
            "run restored from a snapshot and two replays that agree, at "
            "cmc_state+0");
}

} // namespace
} // namespace cmc::search
