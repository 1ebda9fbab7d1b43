// cmc replay: a counterexample run once, step by step, with every system
// call the target made, its replies, region changes and (on request) the
// user stack of each call.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Replay : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cmc-replay-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
  [[nodiscard]] std::string path(const std::string &name) const {
    return (dir_ / name).string();
  }
  // cmc check's JSON report on kv_bug, in report.json.
  std::string bug_report() {
    const std::string report = path("report.json");
    const Outcome check =
        run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
                 "cmc_state", "--invariant", "sticky", "--json", report, "--",
                 demo("kv_bug"), "7000"});
    EXPECT_EQ(check.status, 1) << check.err;
    return report;
  }
  std::filesystem::path dir_;
};

std::size_t count_of(const std::string &text, const std::string &part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++count;
  return count;
}

TEST_F(Replay, TheBugCounterexampleReproducesWithEachStepsCalls) {
  const Outcome replay = run_cmc({"replay", "--from", bug_report()});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("step 1: send \"SET b\\n\"\n"
                            "  read(4, \"SET b\\n\", 255) = 6\n"
                            "  write(4, \"OK\\n\", 3) = 3\n"),
            std::string::npos)
      << replay.out;
  EXPECT_NE(replay.out.find("  response: \"OK\\n\"\n"
                            "  changed: cmc_state+0 00 -> 01\n"
                            "  changed: cmc_state+1 01 -> 00\n"
                            "violated: sticky: byte 1 of cmc_state went 01 "
                            "-> 00 (at step 2 of 2)"),
            std::string::npos)
      << replay.out;
}

TEST_F(Replay, BacktracesShowTheDemosFunctionsAndLines) {
  const Outcome replay =
      run_cmc({"replay", "--backtrace", "--from", bug_report()});
  EXPECT_EQ(replay.status, 1) << replay.err;
  // Each step's write, from kv's serve(), called by main().
  const std::regex write_frame(
      R"(write\(4, "OK\\n", 3\) = 3\n +#0 [^\n]*write[^\n]*\n +#1 serve\+0x[0-9a-f]+ \(kv\.c:[0-9]+\)\n +#2 main\+)");
  const auto begin =
      std::sregex_iterator(replay.out.begin(), replay.out.end(), write_frame);
  EXPECT_EQ(std::distance(begin, std::sregex_iterator()), 2) << replay.out;
}

TEST_F(Replay, CheckPrintsTheCommandThatReplaysIt) {
  const Outcome check = run_cmc(
      {"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
       "cmc_state", "--invariant", "sticky", "--", demo("kv_bug"), "7000"});
  const std::string marker = "replay it: cmc ";
  const auto at = check.out.find(marker);
  ASSERT_NE(at, std::string::npos) << check.out;
  const std::string line = check.out.substr(
      at + marker.size(), check.out.find('\n', at) - at - marker.size());
  EXPECT_EQ(line, "replay --region cmc_state --invariant sticky --steps "
                  "'SET b\\n' 'SET a\\n' -- " +
                      demo("kv_bug") + " 7000");
  // The shell runs it as printed.
  const std::string shell = cmc_binary() + " " + line + " > /dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(shell.c_str())), 1);
}

TEST_F(Replay, StepsThatBreakNothingExitZero) {
  const Outcome replay =
      run_cmc({"replay", "--region", "cmc_state", "--invariant", "sticky",
               "--steps", "SET a\\n", "SET b\\n", "--", demo("kv"), "7000"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("no violation in 2 steps"), std::string::npos);
  EXPECT_EQ(count_of(replay.out, "write(4, \"OK\\n\", 3) = 3"), 2U);
}

// The counterexample of kv_bug, replayed on the fixed kv: the bug is gone.
TEST_F(Replay, AFixedBuildDoesNotReproduce) {
  const Outcome replay =
      run_cmc({"replay", "--from", bug_report(), "--", demo("kv"), "7000"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("does not reproduce: sticky: byte 1 of cmc_state "
                            "went 01 -> 00; the report found it with " +
                            demo("kv_bug")),
            std::string::npos)
      << replay.out;
  EXPECT_EQ(replay.err, "");
}

// The report's own build not showing its violation: cmc's control failed.
TEST_F(Replay, TheSameBuildNotReproducingIsNondeterminism) {
  const std::string report = bug_report();
  auto json = nlohmann::json::parse(std::ifstream(report));
  json["counterexample"] = nlohmann::json::parse(R"([{"send": "SET a\n"}])");
  std::ofstream(report) << json.dump();
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 3) << replay.err;
  EXPECT_NE(replay.err.find("did not reproduce with the build that showed "
                            "it"),
            std::string::npos)
      << replay.err;
  EXPECT_NE(replay.err.find("not deterministic"), std::string::npos);
}

// A report that does not name its build: cmc cannot tell which it is.
TEST_F(Replay, AViolationThatDoesNotReproduceIsAWarning) {
  const std::string report = path("stale.json");
  std::ofstream(report) << R"({"verdict": "violated",
    "counterexample": [{"send": "SET b\n"}, {"send": "SET a\n"}],
    "violation": "sticky: byte 1 of cmc_state went 01 -> 00",
    "replay": {"command": [")"
                        << demo("kv") << R"(", "7000"],
      "regions": ["cmc_state"], "invariant": "sticky"}})";
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("does not reproduce"), std::string::npos);
  EXPECT_NE(replay.out.find("does not say which build"), std::string::npos);
}

TEST_F(Replay, TicksReplayOnTheVirtualClock) {
  const Outcome replay =
      run_cmc({"replay", "--region", "cmc_state", "--invariant", "sticky",
               "--tick", "10s", "--steps", "SET b\\n", "tick", "SET a\\n", "--",
               demo("clock_kv_bug"), "7000"});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("step 2: tick 10s"), std::string::npos);
  EXPECT_NE(replay.out.find("[vDSO __vdso_clock_gettime]"), std::string::npos)
      << replay.out;
}

TEST_F(Replay, BadRequestsAreUsageErrors) {
  EXPECT_EQ(run_cmc({"replay", "--", demo("kv"), "7000"}).status, 2);
  EXPECT_EQ(
      run_cmc({"replay", "--steps", "tick", "--", demo("kv"), "7000"}).status,
      2);
  const Outcome missing = run_cmc({"replay", "--from", path("none.json")});
  EXPECT_EQ(missing.status, 3);
  EXPECT_EQ(missing.err, "cmc: cannot read the report " + path("none.json") +
                             ": No such file or directory\n");
}

} // namespace
} // namespace cmc::testing
