// cmc check on the demo kv, the seed's reference result, in every build.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/integration/json_report.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

std::vector<std::string> kv_check(const std::string &binary,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check",    "-m",     "SET a\\n", "-m",
                                "SET b\\n", "--json", "-",        "-q"};
  if (std::find(extra.begin(), extra.end(), "--region") == extra.end())
    extra.insert(extra.end(), {"--region", "cmc_state"});
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(binary), "7000"});
  return args;
}

class NoLeftovers : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

void expect_holds(const Outcome &run, std::size_t distinct, std::size_t merges,
                  std::size_t transitions) {
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], distinct);
  EXPECT_EQ(json["dedup_merges"], merges);
  EXPECT_EQ(json["transitions"], transitions);
  EXPECT_EQ(json["counterexample"], nullptr);
  EXPECT_EQ(json["error"], nullptr);
}

void expect_lost_b(const Outcome &run, const std::string &region,
                   int byte = 1) {
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(
      json["counterexample"],
      nlohmann::json::parse(R"([{"send":"SET b\n"},{"send":"SET a\n"}])"));
  EXPECT_EQ(json["violation"], "sticky: byte " + std::to_string(byte) + " of " +
                                   region + " went 01 -> 00");
}

struct Build {
  std::string suffix; // "", "_nopie", "_stripped", "_static_pie"
  bool aslr;
  friend void PrintTo(const Build &build, std::ostream *out) {
    *out << "kv" << build.suffix << (build.aslr ? " --aslr" : "");
  }
};

class KvMatrix : public NoLeftovers,
                 public ::testing::WithParamInterface<Build> {
protected:
  [[nodiscard]] static std::vector<std::string> options() {
    std::vector<std::string> extra{"--invariant", "sticky"};
    if (GetParam().aslr)
      extra.emplace_back("--aslr");
    return extra;
  }
};

TEST_P(KvMatrix, CorrectBuildHolds) {
  const Outcome run = run_cmc(kv_check("kv" + GetParam().suffix, options()));
  expect_holds(run, 4, 5, 8);
  EXPECT_EQ(run.json()["max_depth"], 2);
}

TEST_P(KvMatrix, BugBuildLosesB) {
  const Outcome run =
      run_cmc(kv_check("kv_bug" + GetParam().suffix, options()));
  expect_lost_b(run, "cmc_state");
}

INSTANTIATE_TEST_SUITE_P(
    Builds, KvMatrix,
    ::testing::Values(Build{"", false}, Build{"", true}, Build{"_nopie", false},
                      Build{"_nopie", true}, Build{"_stripped", false},
                      Build{"_stripped", true}, Build{"_static_pie", false},
                      Build{"_static_pie", true}),
    [](const auto &info) {
      return "kv" + info.param.suffix + (info.param.aslr ? "_aslr" : "");
    });

using Kv = NoLeftovers;

TEST_F(Kv, AnyGlobalServesAsTheRegion) {
  expect_holds(
      run_cmc(kv_check("kv", {"--region", "store", "--invariant", "sticky"})),
      4, 5, 8);
  expect_holds(run_cmc(kv_check("kv_stripped", {"--region", "store+1:2",
                                                "--invariant", "sticky"})),
               4, 5, 8);
  expect_lost_b(run_cmc(kv_check("kv_bug", {"--region", "store+1:2",
                                            "--invariant", "sticky"})),
                "store+1:2");
}

// A stripped binary keeps its section headers: .bss holds kv's cells.
TEST_F(Kv, ALoadedSectionServesAsTheRegion) {
  expect_holds(run_cmc(kv_check("kv_stripped",
                                {"--region", ".bss", "--invariant", "sticky"})),
               4, 5, 8);
  const Outcome bug = run_cmc(kv_check(
      "kv_bug_stripped", {"--region", ".bss", "--invariant", "sticky"}));
  ASSERT_EQ(bug.status, 1) << bug.err;
  EXPECT_EQ(
      bug.json()["counterexample"],
      nlohmann::json::parse(R"([{"send":"SET b\n"},{"send":"SET a\n"}])"));
  const Outcome missing = run_cmc(kv_check("kv", {"--region", ".nonesuch"}));
  EXPECT_EQ(missing.status, 3);
  EXPECT_EQ(missing.json()["error"],
            demo("kv") + " has no loaded section '.nonesuch'");
}

TEST_F(Kv, SeveralRegionsFormOneState) {
  const Outcome run =
      run_cmc(kv_check("kv_bug", {"--region", "store", "--region", "cmc_state",
                                  "--invariant", "sticky"}));
  // store's byte 2 is cell b: the first region in the state reports it.
  expect_lost_b(run, "store", 2);
}

TEST_F(Kv, DepthBoundSaysHowFarItHolds) {
  const Outcome run =
      run_cmc(kv_check("kv", {"--max-depth", "1", "--invariant", "sticky"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], false);
  EXPECT_EQ(json["distinct_states"], 3);
  EXPECT_EQ(json["transitions"], 2);
  EXPECT_EQ(json["max_depth"], 1);
  EXPECT_NE(run.err.find("holds up to depth 1"), std::string::npos) << run.err;
}

TEST_F(Kv, WithoutAnInvariantTheBugIsNoViolation) {
  expect_holds(run_cmc(kv_check("kv_bug")), 4, 5, 8);
}

TEST_F(Kv, HumanReportNamesCountsAndCollisionOdds) {
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
               "cmc_state", "--invariant", "sticky", "--", demo("kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("holds: 4 distinct states, 5 dedup merges, 8 "
                         "transitions"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("collision probability"), std::string::npos);
}

// CMC_LOG turns on one module's lines (util/log.h), on stderr, and only
// that module's; without it a run logs nothing.
TEST_F(Kv, CmcLogTurnsOnAModulesLines) {
  const std::vector<std::string> args{
      "check",    "-q",        "-j", "1",        "-m",  "SET a\\n",
      "--region", "cmc_state", "--", demo("kv"), "7000"};
  setenv("CMC_LOG", "search=debug", 1);
  const Outcome logged = run_cmc(args);
  unsetenv("CMC_LOG");
  ASSERT_EQ(logged.status, 0) << logged.err;
  EXPECT_TRUE(has(logged.err, "cmc[search] debug: depth 0: 1 states to "
                              "expand\n"))
      << logged.err;
  EXPECT_FALSE(has(logged.err, "cmc[tracer]")) << logged.err;
  const Outcome quiet = run_cmc(args);
  EXPECT_FALSE(has(quiet.err, "cmc[search]")) << quiet.err;
}

TEST_F(Kv, JsonReportToAFile) {
  const std::string path = ::testing::TempDir() + "/kv_report.json";
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
               "cmc_state", "--invariant", "sticky", "--json", path, "--",
               demo("kv_bug"), "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  std::ifstream file(path);
  const auto json = nlohmann::json::parse(file, nullptr, false);
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_TRUE(json.contains("elapsed_s"));
  EXPECT_TRUE(json.contains("states_per_s"));
}

nlohmann::json counts_of(const Outcome &run) { return answers_of(run.json()); }

std::vector<std::string> kv4_check(const std::string &binary,
                                   const std::string &jobs) {
  std::vector<std::string> args{"check",       "-q",    "--json",   "-",
                                "-j",          jobs,    "--region", "cmc_state",
                                "--invariant", "sticky"};
  for (const char *cell : {"a", "b", "c", "d"})
    args.insert(args.end(), {"-m", std::string("SET ") + cell + "\\n"});
  args.insert(args.end(), {"--", demo(binary), "7000"});
  return args;
}

TEST_F(Kv, ResultsAreTheSameForEveryNumberOfWorkers) {
  const Outcome one = run_cmc(kv4_check("kv4", "1"));
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.json()["distinct_states"], 16);
  EXPECT_EQ(one.json()["transitions"], 64);
  EXPECT_EQ(one.json()["dedup_merges"], 64 - 15);
  for (const char *jobs : {"2", "8"}) {
    const Outcome many = run_cmc(kv4_check("kv4", jobs));
    ASSERT_EQ(many.status, 0) << many.err;
    EXPECT_EQ(counts_of(many), counts_of(one)) << "-j " << jobs;
  }
}

TEST_F(Kv, CounterexampleIsTheSameForEveryNumberOfWorkers) {
  const Outcome one =
      run_cmc(kv_check("kv_bug", {"--invariant", "sticky", "-j", "1"}));
  ASSERT_EQ(one.status, 1) << one.err;
  for (const char *jobs : {"2", "8"}) {
    const Outcome many =
        run_cmc(kv_check("kv_bug", {"--invariant", "sticky", "-j", jobs}));
    ASSERT_EQ(many.status, 1) << many.err;
    EXPECT_EQ(counts_of(many), counts_of(one)) << "-j " << jobs;
  }
}

} // namespace
} // namespace cmc::testing
