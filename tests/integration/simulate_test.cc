// cmc simulate: random walks over the steps check explores, on the demos.
// demo/lock_server_bug grants the lock twice after three steps in an
// order (A locks, B unlocks what it does not hold, B locks); demo/kv has
// no bug.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

std::vector<std::string> lock_walks(const std::string &server,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "simulate", "-q",          "--client",  "A",         "-m",
      "LOCK\\n",  "-m",          "UNLOCK\\n", "--client",  "B",
      "-m",       "LOCK\\n",     "-m",        "UNLOCK\\n", "--region",
      "held",     "--invariant", "exclusive", "--json",    "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(server), "7000"});
  return args;
}

// The three steps of the bug, by the clients that take them: one client
// locks, the other unlocks and locks.
bool is_the_ordering_bug(const nlohmann::json &counterexample) {
  if (counterexample.size() != 3)
    return false;
  const auto &first = counterexample[0];
  const auto &second = counterexample[1];
  const auto &third = counterexample[2];
  return first["send"] == "LOCK\n" && second["send"] == "UNLOCK\n" &&
         third["send"] == "LOCK\n" && second["client"] == third["client"] &&
         first["client"] != second["client"];
}

class Simulate : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(Simulate, FindsTheThreeStepOrderingBugTheSameWayForTheSameSeed) {
  const Outcome first =
      run_cmc(lock_walks("lock_server_bug", {"--walk-seed", "1", "-j", "1"}));
  ASSERT_EQ(first.status, 1) << first.err;
  const auto json = first.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["complete"], false);
  EXPECT_EQ(json["violation"],
            "exclusive: byte 0 of held and byte 1 of held are both set");
  EXPECT_TRUE(is_the_ordering_bug(json["counterexample"]))
      << json["counterexample"];
  const auto &simulation = json["simulation"];
  EXPECT_EQ(simulation["walk_seed"], 1);
  // Walk k's steps depend on the seed and k alone: with seed 1 the walk
  // that fails takes six steps, three of which the minimisation drops.
  EXPECT_EQ(simulation["found"].size(), 6U) << simulation["found"];
  EXPECT_GT(simulation["minimise_runs"], 0);
  EXPECT_EQ(simulation["walks"].get<std::size_t>(),
            simulation["violating_walk"].get<std::size_t>() + 1);
  // The same seed, on two workers: the same walk, counts and minimised
  // counterexample.
  const Outcome again =
      run_cmc(lock_walks("lock_server_bug", {"--walk-seed", "1", "-j", "2"}));
  ASSERT_EQ(again.status, 1) << again.err;
  const auto other = again.json();
  EXPECT_EQ(other["simulation"]["found"], simulation["found"]);
  EXPECT_EQ(other["simulation"]["violating_walk"],
            simulation["violating_walk"]);
  EXPECT_EQ(other["simulation"]["steps"], simulation["steps"]);
  EXPECT_EQ(other["counterexample"], json["counterexample"]);
  EXPECT_EQ(other["distinct_states"], json["distinct_states"]);
  EXPECT_EQ(other["transitions"], json["transitions"]);
}

TEST_F(Simulate, TheMinimisedCounterexampleReplaysFromTheReport) {
  const std::string report =
      (std::filesystem::temp_directory_path() /
       ("cmc-simulate-" + std::to_string(getpid()) + ".json"))
          .string();
  auto args = lock_walks("lock_server_bug", {"--walk-seed", "3"});
  *std::find(args.begin(), args.end(), "-") = report;
  const Outcome simulate = run_cmc(args);
  ASSERT_EQ(simulate.status, 1) << simulate.err;
  EXPECT_TRUE(has(simulate.out, "minimised counterexample (3 steps):"))
      << simulate.out;
  EXPECT_TRUE(has(simulate.out, "found by walk ")) << simulate.out;
  EXPECT_TRUE(has(simulate.out, "replay it: cmc replay --client A --client B "
                                "--region held --invariant exclusive --steps"))
      << simulate.out;
  EXPECT_TRUE(has(simulate.out, "or: cmc replay --from " + report))
      << simulate.out;
  const Outcome replay = run_cmc({"replay", "--from", report});
  std::filesystem::remove(report);
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, "violated: exclusive: byte 0 of held and byte 1 "
                              "of held are both set (at step 3 of 3)"))
      << replay.out;
}

TEST_F(Simulate, EverySeedFindsTheBugWithinItsWalks) {
  for (const char *seed : {"0", "2", "5"}) {
    const Outcome run =
        run_cmc(lock_walks("lock_server_bug", {"--walk-seed", seed}));
    ASSERT_EQ(run.status, 1) << "seed " << seed << ": " << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["violation"],
              "exclusive: byte 0 of held and byte 1 of held are both set")
        << "seed " << seed;
    EXPECT_TRUE(is_the_ordering_bug(json["counterexample"]))
        << "seed " << seed << ": " << json["counterexample"];
  }
}

// The other steps of the alphabet are drawn as messages are: clock_kv_bug
// loses cell b once a tick has passed (README, "Time and randomness"), and
// log_server_bug forgets an acknowledged append when it crashes.
TEST_F(Simulate, TicksAndCrashesAreStepsOfTheWalks) {
  const Outcome ticks = run_cmc(
      {"simulate", "-q",          "--json",   "-",         "--tick",
       "10s",      "--max-ticks", "3",        "-m",        "SET a\\n",
       "-m",       "SET b\\n",    "--region", "cmc_state", "--region",
       "last_set", "--invariant", "sticky",   "--",        demo("clock_kv_bug"),
       "7000"});
  ASSERT_EQ(ticks.status, 1) << ticks.err;
  EXPECT_EQ(ticks.json()["counterexample"],
            nlohmann::json::parse(R"([{"tick": "10s"}, {"send": "SET b\n"},
                                      {"send": "SET a\n"}])"));
  const Outcome crash =
      run_cmc({"simulate", "-q", "--json", "-", "--runs", "20", "--depth", "6",
               "--crash", "-m", "APPEND a\\n", "-m", "GET\\n", "--property",
               plugin("log_durable"), "--", demo("log_server_bug"), "7000"});
  ASSERT_EQ(crash.status, 1) << crash.err;
  const auto json = crash.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "APPEND a\n"},
                                      {"crash": true, "closed_by_server": [0]},
                                      {"send": "GET\n"}])"));
  EXPECT_EQ(json["snapshots"]["mode"], "replay");
}

TEST_F(Simulate, ACorrectServerEndsWithNoViolationAndNoClaimOfCompleteness) {
  const Outcome run =
      run_cmc({"simulate", "-q", "--runs", "30", "--depth", "8", "-m",
               "SET a\\n", "-m", "SET b\\n", "--region", "cmc_state",
               "--invariant", "sticky", "--", demo("kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_TRUE(has(run.out, "no violation in 30 walks of up to 8 steps (4 "
                           "distinct states seen); a random search does not "
                           "cover every state"))
      << run.out;
  EXPECT_FALSE(has(run.out, "every reachable state")) << run.out;
  EXPECT_FALSE(has(run.out, "holds")) << run.out;
  // The correct lock server too, its report in JSON.
  const Outcome lock = run_cmc(lock_walks("lock_server", {"--runs", "20"}));
  ASSERT_EQ(lock.status, 0) << lock.err;
  const auto json = lock.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], false);
  EXPECT_EQ(json["counterexample"], nullptr);
  EXPECT_EQ(json["simulation"]["walks"], 20);
  EXPECT_EQ(json["simulation"]["steps"], 20 * 20);
  EXPECT_EQ(json["transitions"], 20 * 20);
  // Which clients are connected is part of the state: at most check's 8.
  EXPECT_GE(json["distinct_states"], 2);
  EXPECT_LE(json["distinct_states"], 8);
}

TEST_F(Simulate, BadBoundsAreOneLineAndExitTwo) {
  for (const std::vector<std::string> &bound :
       {std::vector<std::string>{"--runs", "0"},
        std::vector<std::string>{"--depth", "-1"},
        std::vector<std::string>{"--depth", "0"},
        std::vector<std::string>{"--max-depth", "3"}}) {
    std::vector<std::string> args{"simulate", "-m", "SET a\\n"};
    args.insert(args.end(), bound.begin(), bound.end());
    args.insert(args.end(), {"--", demo("kv"), "7000"});
    const Outcome run = run_cmc(args);
    EXPECT_EQ(run.status, 2) << bound[0] << " " << bound[1] << ": " << run.err;
    EXPECT_EQ(count_of(run.err, "\n"), 1U) << run.err;
    EXPECT_TRUE(has(run.err, bound[0])) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

} // namespace
} // namespace cmc::testing
