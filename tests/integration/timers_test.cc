// Signal timers on cmc's virtual clock: tests/integration/targets/timers.c
// arms alarm, setitimer or a POSIX timer at start for 5 s; its bug is armed
// only by the signal, with the siginfo the kernel would give it, so only a
// tick past the deadline reaches it.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

constexpr std::array kModes{"alarm",    "setitimer", "timer",
                            "cputimer", "sleeper",   "waiter"};

Outcome check_timers(const std::string &mode,
                     std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",     "-m",          "SET a\\n", "-m",     "SET b\\n", "--region",
      "cmc_state", "--invariant", "sticky",   "--json", "-",        "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("timers"), mode, "7000"});
  return run_cmc(args);
}

bool lists_source(const nlohmann::json &report, const std::string &source) {
  return std::ranges::any_of(report["sources"], [&](const auto &entry) {
    return entry["source"] == source && entry["via"] == "syscall";
  });
}

class Timers : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(Timers, WithoutATickNoTimerFiresAndTheBugHides) {
  for (const char *mode : kModes) {
    const Outcome run = check_timers(mode);
    ASSERT_EQ(run.status, 0) << mode << ": " << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["verdict"], "holds") << mode;
    EXPECT_EQ(json["distinct_states"], 4) << mode;
    const bool interval =
        std::string(mode) != "timer" && std::string(mode) != "cputimer";
    EXPECT_TRUE(
        lists_source(json, interval ? "alarm/setitimer" : "timer_create"))
        << mode << ": " << json["sources"];
  }
}

TEST_F(Timers, ATickPastTheDeadlineDeliversTheSignalAndFindsTheBug) {
  for (const char *mode : kModes) {
    const Outcome run = check_timers(mode, {"--tick", "10s"});
    ASSERT_EQ(run.status, 1) << mode << ": " << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["verdict"], "violated") << mode;
    EXPECT_EQ(json["counterexample"],
              nlohmann::json::parse(
                  R"([{"send":"SET b\n"},{"tick":"10s"},{"send":"SET a\n"}])"))
        << mode;
    EXPECT_EQ(json["violation"], "sticky: byte 1 of cmc_state went 01 -> 00")
        << mode;
  }
}

TEST_F(Timers, ATickShortOfTheDeadlineFiresNothing) {
  // Two ticks of 2 s stay short of the 5 s deadline.
  for (const char *mode : {"alarm", "timer"}) {
    const Outcome run =
        check_timers(mode, {"--tick", "2s", "--max-ticks", "2"});
    ASSERT_EQ(run.status, 0) << mode << ": " << run.err;
    EXPECT_EQ(run.json()["verdict"], "holds") << mode;
  }
}

TEST_F(Timers, TheCounterexampleReplays) {
  for (const char *mode : kModes) {
    const Outcome replay =
        run_cmc({"replay", "--region", "cmc_state", "--invariant", "sticky",
                 "--tick", "10s", "--steps", "SET b\\n", "tick", "SET a\\n",
                 "--", target("timers"), mode, "7000"});
    EXPECT_EQ(replay.status, 1) << mode << ": " << replay.out << replay.err;
    EXPECT_TRUE(has(replay.out, "step 2: tick 10s")) << replay.out;
    EXPECT_TRUE(has(replay.out, "cmc_state went 01 -> 00")) << replay.out;
  }
}

// Two ticks of 3 s pass the deadline. A snapshot of the state after the
// first keeps the timer's deadline: restored in place, the second fires
// it as a fresh target replaying the path does, and the counts agree.
TEST_F(Timers, SnapshotsKeepTheTimersDeadlines) {
  const auto check = [](const char *mode) {
    return check_timers("alarm",
                        {"--tick", "3s", "--max-ticks", "2", "--mode", mode});
  };
  const Outcome snapshot = check("snapshot");
  ASSERT_EQ(snapshot.status, 1) << snapshot.err;
  const auto json = snapshot.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send":"SET b\n"},{"tick":"3s"},
                                      {"tick":"3s"},{"send":"SET a\n"}])"));
  EXPECT_GT(json["snapshots"]["restored"], 0) << json["snapshots"];
  const Outcome replay = check("replay");
  ASSERT_EQ(replay.status, 1) << replay.err;
  for (const char *key : {"distinct_states", "dedup_merges", "transitions"})
    EXPECT_EQ(replay.json()[key], json[key]) << key;
  EXPECT_EQ(replay.json()["counterexample"], json["counterexample"]);
}

// A periodic timer short of its deadline after two ticks: the same counts
// at every job count.
TEST_F(Timers, TheSameCountsAtEveryJobCount) {
  const auto check = [](const char *jobs) {
    return check_timers("setitimer",
                        {"--tick", "2s", "--max-ticks", "2", "-j", jobs});
  };
  const Outcome one = check("1");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto json = one.json();
  EXPECT_EQ(json["verdict"], "holds");
  const Outcome two = check("2");
  ASSERT_EQ(two.status, 0) << two.err;
  for (const char *key : {"distinct_states", "dedup_merges", "transitions"})
    EXPECT_EQ(two.json()[key], json[key]) << key;
}

} // namespace
} // namespace cmc::testing
