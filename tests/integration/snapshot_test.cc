// --mode snapshot on real targets: each worker restores the states it saved
// in place instead of replaying their paths; the reports must be those of
// --mode replay (the default) but for the timings and the "snapshots"
// object, which says how each transition was taken.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Snapshots : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> check(const std::string &mode,
                               std::vector<std::string> args,
                               const std::vector<std::string> &target) {
  args.insert(args.begin(), {"check", "-q", "--json", "-", "--mode", mode});
  args.emplace_back("--");
  args.insert(args.end(), target.begin(), target.end());
  return args;
}

// The report without what differs between the modes.
nlohmann::json answers(nlohmann::json json) {
  for (const char *field :
       {"elapsed_s", "states_per_s", "transitions_per_s", "snapshots"})
    json.erase(field);
  return json;
}

// Runs args in both modes, expects status from each and the same answers;
// returns the snapshot mode's report.
nlohmann::json same_as_replay(const std::vector<std::string> &args,
                              const std::vector<std::string> &target,
                              int status) {
  const Outcome replay = run_cmc(check("replay", args, target));
  EXPECT_EQ(replay.status, status) << replay.err;
  const Outcome snapshot = run_cmc(check("snapshot", args, target));
  EXPECT_EQ(snapshot.status, status) << snapshot.err;
  EXPECT_EQ(answers(snapshot.json()), answers(replay.json()));
  EXPECT_EQ(replay.json()["snapshots"]["mode"], "replay");
  EXPECT_EQ(replay.json()["snapshots"]["restored"], 0);
  EXPECT_EQ(snapshot.json()["snapshots"]["mode"], "snapshot");
  return snapshot.json();
}

std::vector<std::string> kv4_messages(const char *jobs) {
  std::vector<std::string> args{"-j",        jobs,          "--region",
                                "cmc_state", "--invariant", "sticky"};
  for (const char *cell : {"a", "b", "c", "d"})
    args.insert(args.end(), {"-m", std::string("SET ") + cell + "\\n"});
  return args;
}

// kv4: 16 states, 64 transitions; every transition after the first of a
// worker branches from a saved state, the first restored one and every
// 64th after checked against a replay.
TEST_F(Snapshots, SameCountsAsReplayOnKv4) {
  for (const char *jobs : {"1", "2"}) {
    const auto json =
        same_as_replay(kv4_messages(jobs), {demo("kv4"), "7000"}, 0);
    EXPECT_EQ(json["distinct_states"], 16) << "-j " << jobs;
    EXPECT_EQ(json["transitions"], 64) << "-j " << jobs;
    const auto &snapshots = json["snapshots"];
    EXPECT_EQ(snapshots["restored"].get<int>() +
                  snapshots["replayed"].get<int>(),
              64);
    EXPECT_GE(snapshots["restored"], 60) << snapshots;
    EXPECT_GE(snapshots["checked"], 1) << snapshots;
    EXPECT_EQ(snapshots["refusals"], nlohmann::json::object()) << snapshots;
    EXPECT_GT(snapshots["memory_bytes"], 0) << snapshots;
    EXPECT_GE(snapshots["states_kept"], 1) << snapshots;
  }
}

// The same shortest counterexample, with the same effects of each step.
TEST_F(Snapshots, SameCounterexampleAsReplayOnKvBug) {
  const auto json =
      same_as_replay({"-m", "SET a\\n", "-m", "SET b\\n", "--region",
                      "cmc_state", "--invariant", "sticky"},
                     {demo("kv_bug"), "7000"}, 1);
  EXPECT_EQ(
      json["counterexample"],
      nlohmann::json::parse(R"([{"send":"SET b\n"},{"send":"SET a\n"}])"));
  EXPECT_GE(json["snapshots"]["restored"], 1);
}

// The whole process as the state: each restored state is read again
// whole, and must have the fingerprint its path had when replayed.
TEST_F(Snapshots, WholeProcessStateSameAsReplay) {
  for (const char *jobs : {"1", "2"}) {
    const auto json =
        same_as_replay({"-j", jobs, "-m", "SET a\\n", "-m", "SET b\\n"},
                       {demo("kv"), "7000"}, 0);
    EXPECT_GE(json["snapshots"]["restored"], 1) << "-j " << jobs;
  }
}

// A target with three threads is never saved: every transition replays,
// each refusal counted, and the answers are replay's.
TEST_F(Snapshots, ThreadsAreRefusedAndReplayed) {
  const auto json =
      same_as_replay({"-m", "SET a\\n", "-m", "SET b\\n", "--region",
                      "cmc_state", "--invariant", "sticky"},
                     {target("threads"), "pool", "7000"}, 0);
  EXPECT_EQ(json["snapshots"]["restored"], 0);
  EXPECT_GE(json["snapshots"]["refusals"]["threads"], 1) << json["snapshots"];
}

// A step that changes a signal handler (kept by the kernel, not in
// memory) cannot be undone: a restore across it is refused and the path
// replayed.
TEST_F(Snapshots, AChangedSignalHandlerIsRefused) {
  const auto json =
      same_as_replay({"-m", "SET a\\n", "-m", "HANDLE\\n", "--region",
                      "cmc_state", "--invariant", "sticky"},
                     {target("misbehave"), "serve", "7000"}, 0);
  EXPECT_GE(json["snapshots"]["refusals"]["calls"], 1) << json["snapshots"];
  EXPECT_GE(json["snapshots"]["restored"], 1) << json["snapshots"];
}

// A byte that differs per run stops the check as it does in replay mode,
// named (a restored state keeps its bytes: the run checked against a
// replay finds it, not the replay of a prefix); --mask-volatile is
// refused in snapshot mode for now.
TEST_F(Snapshots, VolatileBytesBehaveAsInReplay) {
  const std::vector<std::string> stamped{
      "-m",        "SET a\\n", "-m",    "SET b\\n",    "--region",
      "cmc_state", "--region", "stamp", "--invariant", "sticky"};
  const std::vector<std::string> target{testing::target("misbehave"), "stamp",
                                        "7000"};
  const Outcome run = run_cmc(check("snapshot", stamped, target));
  ASSERT_EQ(run.status, 3) << run.err;
  EXPECT_NE(run.err.find("differs between two runs at stamp+0"),
            std::string::npos)
      << run.err;
  // Masking them is replay mode's alone, for now.
  std::vector<std::string> masked = stamped;
  masked.emplace_back("--mask-volatile");
  const Outcome refused = run_cmc(check("snapshot", masked, target));
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("--mask-volatile finds volatile bytes by "
                             "replaying: it needs --mode replay"),
            std::string::npos)
      << refused.err;
}

TEST_F(Snapshots, MemoryNeedsSnapshotMode) {
  const Outcome run = run_cmc({"check", "-q", "--snapshot-memory", "64", "-m",
                               "SET a\\n", "--", demo("kv"), "7000"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_NE(run.err.find("--snapshot-memory needs --mode snapshot"),
            std::string::npos)
      << run.err;
}

} // namespace
} // namespace cmc::testing
