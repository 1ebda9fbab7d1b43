// What a state is, on real targets: --once (the messages taken are part of
// it), no --region (the path is), --mask-volatile (bytes that differ
// between runs are not).

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

// Without --region each path is its own state: with 2 messages and
// --max-depth 2, 1 + 2 + 4 = 7 paths and 6 transitions, nothing merges.
TEST_F(Modes, NoRegionOnKvIsATree) {
  const Outcome run =
      run_cmc(with({"-m", "SET a\\n", "-m", "SET b\\n", "--max-depth", "2"},
                   {demo("kv"), "7000"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["state"], "path");
  EXPECT_EQ(json["complete"], false);
  EXPECT_EQ(json["distinct_states"], 7);
  EXPECT_EQ(json["dedup_merges"], 0);
  EXPECT_EQ(json["transitions"], 6);
  EXPECT_EQ(json["max_depth"], 2);
  const Outcome text =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--max-depth",
               "2", "--", demo("kv"), "7000"});
  EXPECT_NE(text.out.find("no --region: every path is its own state (no "
                          "dedup); holds up to depth 2: 7 paths, 6 "
                          "transitions"),
            std::string::npos)
      << text.out;
}

TEST_F(Modes, NoRegionOnLockServerIsATree) {
  const Outcome run =
      run_cmc(with({"-m", "LOCK\\n", "-m", "UNLOCK\\n", "--max-depth", "2"},
                   {demo("lock_server"), "7000"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["distinct_states"], 7);
  EXPECT_EQ(json["transitions"], 6);
}

// lock_server's bug acknowledges an UNLOCK from a client that holds
// nothing; the correct server answers NOT HELD (3 paths, 2 transitions).
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
  EXPECT_EQ(correct.json()["distinct_states"], 3);
  EXPECT_EQ(correct.json()["transitions"], 2);
}

TEST_F(Modes, NoRegionNeedsADepthAndNoRegionInvariant) {
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
  usage({}, "without --region every path is its own state (no dedup): give "
            "--max-depth");
  usage({"--max-depth", "2", "--invariant", "sticky"},
        "--invariant sticky needs a --region");
  usage({"--max-depth", "2", "--mask-volatile"},
        "--mask-volatile needs a --region");
}

// misbehave's stamp mode writes a byte of its process id at every SET:
// [SET a] differs between two runs at stamp+0.
std::vector<std::string> stamped(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "-m",        "SET a\\n", "-m",    "SET b\\n",    "--region",
      "cmc_state", "--region", "stamp", "--invariant", "sticky"};
  args.insert(args.end(), extra.begin(), extra.end());
  return with(args, {target("misbehave"), "stamp", "7000"});
}

TEST_F(Modes, VolatileBytesStopTheCheckNamingThem) {
  const Outcome run = run_cmc(stamped());
  ASSERT_EQ(run.status, 3) << run.err;
  EXPECT_NE(run.err.find("nondeterminism: the state after actions [0] "
                         "differs between two runs at stamp+0"),
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
