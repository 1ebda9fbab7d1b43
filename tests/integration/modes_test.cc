// What a state is, on real targets: --once (the messages taken are part of
// it), no --region (the whole process is), --region (an audited
// abstraction), --mask-volatile (bytes that differ between runs are not).

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Modes : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> with(std::vector<std::string> args,
                              const std::vector<std::string> &target) {
  args.insert(args.begin(), {"check", "-q", "--json", "-"});
  args.emplace_back("--");
  args.insert(args.end(), target.begin(), target.end());
  return args;
}

std::vector<std::string> kv_once(const std::string &server) {
  return with({"-m", "SET a\\n", "-m", "SET b\\n", "--once", "--region",
               "cmc_state", "--invariant", "sticky"},
              {demo(server), "7000"});
}

// [] sends SET a or SET b (2 new states); [SET a] may only send SET b and
// [SET b] only SET a: both reach cells 11 with both messages taken, the
// second merges; that state has nothing left to send. 4 distinct states,
// 1 merge, 4 transitions (8 transitions and 5 merges without --once).
TEST_F(Modes, OnceOnKv) {
  const Outcome run = run_cmc(kv_once("kv"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 1);
  EXPECT_EQ(json["transitions"], 4);
  EXPECT_EQ(json["once"], true);
  EXPECT_EQ(json["state"], "regions");
}

// The bug needs each message once: SET b, SET a. [SET b, SET a] ends in
// cells 10, the bytes of [SET a], but with both messages taken: a state of
// its own (5 distinct states, no merge, 4 transitions).
TEST_F(Modes, OnceStillFindsTheKvBug) {
  const Outcome run = run_cmc(kv_once("kv_bug"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "SET b\n"},
                                      {"send": "SET a\n"}])"));
  EXPECT_EQ(json["distinct_states"], 5);
  EXPECT_EQ(json["dedup_merges"], 0);
  EXPECT_EQ(json["transitions"], 4);
}

// Without --region the whole process is the state: the search ends by
// itself, and the same at every -j.
TEST_F(Modes, NoRegionTheWholeProcessIsTheState) {
  std::vector<nlohmann::json> reports;
  for (const char *jobs : {"1", "2"}) {
    const Outcome run =
        run_cmc(with({"-j", jobs, "-m", "SET a\\n", "-m", "SET b\\n"},
                     {demo("kv"), "7000"}));
    ASSERT_EQ(run.status, 0) << run.err;
    reports.push_back(run.json());
  }
  const auto &json = reports[0];
  EXPECT_EQ(json["state"], "process");
  EXPECT_EQ(json["abstraction"], nullptr);
  EXPECT_EQ(json["complete"], true);
  // The cells tell 4 states apart; the process may tell more (the last
  // message is still in kv's read buffer).
  EXPECT_GE(json["distinct_states"], 4);
  EXPECT_GT(json["bytes_read_per_state"], 0);
  for (const char *field :
       {"distinct_states", "dedup_merges", "transitions", "heap"})
    EXPECT_EQ(reports[1][field], json[field]) << field;
  const Outcome text = run_cmc({"check", "-q", "-m", "SET a\\n", "-m",
                                "SET b\\n", "--", demo("kv"), "7000"});
  EXPECT_NE(text.out.find("\nstate: the whole process (--dedup process)"),
            std::string::npos)
      << text.out;
}

// --region makes the regions the state, every merge audited against the
// whole process; --dedup process keeps the whole process as the state and
// reads the regions for the invariant.
TEST_F(Modes, RegionsAreAnAuditedAbstraction) {
  const Outcome regions =
      run_cmc(with({"-m", "SET a\\n", "-m", "SET b\\n", "--region", "cmc_state",
                    "--invariant", "sticky"},
                   {demo("kv"), "7000"}));
  ASSERT_EQ(regions.status, 0) << regions.err;
  const auto json = regions.json();
  EXPECT_EQ(json["state"], "regions");
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["abstraction"]["merges"], 5);
  const Outcome process =
      run_cmc(with({"--dedup", "process", "-m", "SET a\\n", "-m", "SET b\\n",
                    "--region", "cmc_state", "--invariant", "sticky"},
                   {demo("kv_bug"), "7000"}));
  ASSERT_EQ(process.status, 1) << process.err;
  EXPECT_EQ(process.json()["state"], "process");
  EXPECT_EQ(process.json()["counterexample"],
            nlohmann::json::parse(R"([{"send": "SET b\n"},
                                      {"send": "SET a\n"}])"));
}

// lock_server's bug acknowledges an UNLOCK from a client that holds
// nothing; the correct server answers NOT HELD.
TEST_F(Modes, NoRegionFindsAForbiddenResponse) {
  const std::vector<std::string> args = {
      "-m", "UNLOCK\\n", "--forbid-response", "OK", "--max-depth", "2"};
  const Outcome bug = run_cmc(with(args, {demo("lock_server_bug"), "7000"}));
  ASSERT_EQ(bug.status, 1) << bug.err;
  EXPECT_EQ(bug.json()["counterexample"],
            nlohmann::json::parse(R"([{"send": "UNLOCK\n"}])"));
  EXPECT_EQ(bug.json()["violation"], "forbidden response: \"OK\\n\" matches "
                                     "/OK/");
  const Outcome correct = run_cmc(with(args, {demo("lock_server"), "7000"}));
  ASSERT_EQ(correct.status, 0) << correct.err;
  EXPECT_EQ(correct.json()["state"], "process");
}

TEST_F(Modes, StateOptionsThatNeedRegions) {
  const std::vector<std::string> kv = {"--", demo("kv"), "7000"};
  const auto usage = [&](std::vector<std::string> args,
                         const std::string &part) {
    args.insert(args.begin(), {"check", "-q", "-m", "SET a\\n"});
    args.insert(args.end(), kv.begin(), kv.end());
    const Outcome run = run_cmc(args);
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_NE(run.err.find(part), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  };
  usage({"--invariant", "sticky"}, "--invariant sticky needs a --region");
  usage({"--dedup", "regions"}, "--dedup regions needs a --region");
  usage({"--strict"}, "--strict needs --dedup regions");
}

// misbehave's stamp mode writes a byte that differs per run at every SET:
// [SET a] differs between two runs at stamp+0.
std::vector<std::string> stamped(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "-m",        "SET a\\n", "-m",    "SET b\\n",    "--region",
      "cmc_state", "--region", "stamp", "--invariant", "sticky"};
  args.insert(args.end(), extra.begin(), extra.end());
  return with(args, {target("misbehave"), "stamp", "7000"});
}

// In replay mode the state after [SET a] is found to differ; in snapshot
// mode (the default), the first restored run, after [SET a, SET a].
TEST_F(Modes, VolatileBytesStopTheCheckNamingThem) {
  const Outcome run = run_cmc(stamped());
  ASSERT_EQ(run.status, 3) << run.err;
  EXPECT_NE(run.err.find("nondeterminism: the state after actions [0"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("differs between two runs at stamp+0"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("--mask-volatile"), std::string::npos) << run.err;
}

// Found at the first replay of [SET a] (depth 2), masked, and the search
// starts again: kv's 4 states, 5 merges and 8 transitions.
TEST_F(Modes, MaskVolatileMasksAndListsThem) {
  const Outcome run = run_cmc(stamped({"--mask-volatile"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
  EXPECT_EQ(json["masked"], nlohmann::json::parse(R"(["stamp+0"])"));
  EXPECT_EQ(json["restarts"], 1);
  const Outcome text = run_cmc(
      {"check", "-q", "-m", "SET a\\n", "--region", "cmc_state", "--region",
       "stamp", "--mask-volatile", "--", target("misbehave"), "stamp", "7000"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("masked volatile bytes: stamp+0"), std::string::npos)
      << text.out;
}

} // namespace
} // namespace cmc::testing
