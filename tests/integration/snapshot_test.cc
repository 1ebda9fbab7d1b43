// --mode snapshot on real targets: each worker restores the states it saved
// in place instead of replaying their paths; the reports must be those of
// --mode replay (the default) but for the timings and the "snapshots"
// object, which says how each transition was taken.

#include <gtest/gtest.h>

#include "tests/integration/beanstalkd_check.h"
#include "tests/integration/json_report.h"
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

// Runs args in both modes, expects status from each and the same answers;
// returns the snapshot mode's report.
nlohmann::json same_as_replay(const std::vector<std::string> &args,
                              const std::vector<std::string> &target,
                              int status) {
  const Outcome replay = run_cmc(check("replay", args, target));
  EXPECT_EQ(replay.status, status) << replay.err;
  const Outcome snapshot = run_cmc(check("snapshot", args, target));
  EXPECT_EQ(snapshot.status, status) << snapshot.err;
  EXPECT_EQ(answers_of(snapshot.json()), answers_of(replay.json()));
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
      same_as_replay({"-j", "1", "-m", "SET a\\n", "-m", "HANDLE\\n",
                      "--region", "cmc_state", "--invariant", "sticky"},
                     {target("misbehave"), "serve", "7000"}, 0);
  EXPECT_GE(json["snapshots"]["refusals"]["calls"], 1) << json["snapshots"];
  EXPECT_GE(json["snapshots"]["restored"], 1) << json["snapshots"];
}

// The total of the refusals, of any reason.
int refused(const nlohmann::json &snapshots) {
  int total = 0;
  for (const auto &[reason, count] : snapshots["refusals"].items())
    total += count.get<int>();
  return total;
}

// Debian's beanstalkd with two clients that may disconnect (as in
// debian_test.cc): 90 of its 245 transitions open or close a connection.
// A restore re-creates the connections instead of refusing; every
// transition but the first restores (107 did while a change of the
// connections was refused, 90 times).
TEST_F(Snapshots, ConnectionsOfBeanstalkdAreRecreated) {
  std::vector<std::string> args{"-j", "1", "--max-depth", "4"};
  const auto options = beanstalkd_options();
  args.insert(args.end(), options.begin(), options.end());
  const auto json = same_as_replay(args, beanstalkd_command(), 0);
  EXPECT_EQ(json["distinct_states"], 154);
  EXPECT_EQ(json["transitions"], 245);
  const auto &snapshots = json["snapshots"];
  EXPECT_GE(snapshots["restored"], 235) << snapshots;
  EXPECT_LE(refused(snapshots), 5) << snapshots;
  EXPECT_GE(snapshots["checked"], 2) << snapshots;
}

// lock_server (poll, blocking sockets) with --disconnect: a client's
// connection closed, or opened again on the next port, between a save
// and a restore. The same states, transitions and counterexample as
// replay, with regions and with the whole process as the state.
TEST_F(Snapshots, DisconnectsOfLockServerAreRestored) {
  const std::vector<std::string> clients{
      "-j", "1",       "--disconnect", "--client",  "A",
      "-m", "LOCK\\n", "-m",           "UNLOCK\\n", "--client",
      "B",  "-m",      "LOCK\\n",      "-m",        "UNLOCK\\n"};
  auto regions = clients;
  regions.insert(regions.end(),
                 {"--region", "held", "--invariant", "exclusive"});
  const auto holds = same_as_replay(regions, {demo("lock_server"), "7000"}, 0);
  EXPECT_EQ(holds["distinct_states"], 9);
  EXPECT_EQ(holds["transitions"], 54);
  EXPECT_GE(holds["snapshots"]["restored"], 50) << holds["snapshots"];
  EXPECT_EQ(refused(holds["snapshots"]), 0) << holds["snapshots"];
  const auto bug =
      same_as_replay(regions, {demo("lock_server_bug"), "7000"}, 1);
  EXPECT_EQ(bug["counterexample"],
            nlohmann::json::parse(R"([{"client":"A","send":"LOCK\n"},
                                      {"client":"B","send":"UNLOCK\n"},
                                      {"client":"B","send":"LOCK\n"}])"));
  EXPECT_GE(bug["snapshots"]["restored"], 30) << bug["snapshots"];
  auto whole = clients;
  whole.insert(whole.end(), {"--max-depth", "3"});
  const auto process = same_as_replay(whole, {demo("lock_server"), "7000"}, 0);
  EXPECT_EQ(process["distinct_states"], 72);
  EXPECT_GE(process["snapshots"]["restored"], 120) << process["snapshots"];
}

// A re-created connection gets the options the target set on the one it
// accepted (replies options answers with what getsockopt reads of them,
// and a default value is a forbidden response).
TEST_F(Snapshots, RecreatedConnectionsKeepTheirSocketOptions) {
  const auto json = same_as_replay(
      {"-j", "1", "--disconnect", "--client", "A", "-m", "a\\n", "-m", "b\\n",
       "--max-depth", "4", "--region", "cmc_state", "--forbid-response",
       "nodelay 0|keepalive 0|idle 7200|tos 0"},
      {target("replies"), "options", "7000"}, 0);
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["transitions"], 18);
  EXPECT_GE(json["snapshots"]["restored"], 17) << json["snapshots"];
  EXPECT_EQ(refused(json["snapshots"]), 0) << json["snapshots"];
}

// A target that keeps its pid and working directory (replies whoami) is
// checked by its whole process without a false alarm: the replay that
// checks a restored run gets the pid and run directory a fresh target
// gets, although the live target holds them (it ran beside it and got pid
// 3 and /dev/shm/cmc-run-1: "nondeterminism" at .bss).
TEST_F(Snapshots, ATargetKeepingItsPidAndDirectoryIsCheckedAsInReplay) {
  for (const char *jobs : {"1", "2"}) {
    const auto json =
        same_as_replay({"-j", jobs, "-m", "x", "-m", "yy", "--max-depth", "3"},
                       {target("replies"), "whoami", "7000"}, 0);
    EXPECT_EQ(json["distinct_states"], 9) << "-j " << jobs;
    EXPECT_GE(json["snapshots"]["restored"], 9) << json["snapshots"];
    EXPECT_GE(json["snapshots"]["checked"], 1) << json["snapshots"];
  }
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

// Without --mode a check takes snapshots, and replays with
// --mask-volatile (which finds volatile bytes by replaying).
TEST_F(Snapshots, SnapshotIsTheDefaultModeButWithMaskVolatile) {
  const std::vector<std::string> kv{
      "check", "-q",       "--json",   "-",         "-m",          "SET a\\n",
      "-m",    "SET b\\n", "--region", "cmc_state", "--invariant", "sticky"};
  std::vector<std::string> plain = kv;
  plain.insert(plain.end(), {"--", demo("kv"), "7000"});
  const Outcome run = run_cmc(plain);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["snapshots"]["mode"], "snapshot");
  EXPECT_GE(run.json()["snapshots"]["restored"], 1) << run.json();
  std::vector<std::string> masked = kv;
  masked.insert(masked.end(), {"--mask-volatile", "--", demo("kv"), "7000"});
  const Outcome replayed = run_cmc(masked);
  ASSERT_EQ(replayed.status, 0) << replayed.err;
  EXPECT_EQ(replayed.json()["snapshots"]["mode"], "replay");
}

TEST_F(Snapshots, MemoryNeedsSnapshotMode) {
  const Outcome run =
      run_cmc({"check", "-q", "--mode", "replay", "--snapshot-memory", "64",
               "-m", "SET a\\n", "--", demo("kv"), "7000"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_NE(run.err.find("--snapshot-memory needs --mode snapshot"),
            std::string::npos)
      << run.err;
}

} // namespace
} // namespace cmc::testing
