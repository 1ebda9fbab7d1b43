// Threaded targets (tests/integration/targets/threads.c): a worker thread
// woken for every message, an idle helper parked on a futex for good, a
// worker waiting with a timeout on the virtual clock, and a deadlock.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

Outcome check_threads(const std::string &mode,
                      std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",    "-q",        "-m",          "SET a\\n", "-m",     "SET b\\n",
      "--region", "cmc_state", "--invariant", "sticky",   "--json", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("threads"), mode, "7000"});
  return run_cmc(args);
}

class Threads : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(Threads, AStepEndsWhenTheWokenWorkerParksAgain) {
  // The main thread hands each message to the worker and waits for it;
  // the reply and the cell come from the worker. Any step that ended
  // before the worker was done would show as nondeterminism (exit 3) or
  // as the wrong states.
  const Outcome run = check_threads("pool");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
}

TEST_F(Threads, ATimedWaitOfAWorkerRunsOnTheVirtualClock) {
  // Without ticks the worker's 5 s timeout never passes: kv's 4 states.
  const Outcome still = check_threads("timed");
  ASSERT_EQ(still.status, 0) << still.err;
  EXPECT_EQ(still.json()["distinct_states"], 4);
  // A 5 s tick times the wait out (cmc_state[2]) and the worker waits
  // again until 5 s later. With up to two ticks a path's state is its
  // cells (4) and its number of ticks (0-2), which decides cmc_state[2]
  // and the worker's deadline: 12 states. The 8 with fewer than two ticks
  // try 3 actions, the other 4 the two messages: 32 transitions.
  const Outcome ticked =
      check_threads("timed", {"--tick", "5s", "--max-ticks", "2"});
  ASSERT_EQ(ticked.status, 0) << ticked.err;
  const auto json = ticked.json();
  EXPECT_EQ(json["distinct_states"], 12);
  EXPECT_EQ(json["transitions"], 32);
  EXPECT_EQ(json["dedup_merges"], 21);
}

TEST_F(Threads, EveryThreadWaitingOnAFutexIsADeadlock) {
  // JOIN: the main thread joins the worker, which waits for a job that
  // can no longer come. Found at once, not after the step timeout.
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "JOIN\\n", "--region",
               "cmc_state", "--json", "-", "--step-timeout", "60", "--",
               target("threads"), "deadlock", "7000"});
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "JOIN\n"}])"));
  EXPECT_EQ(json["violation"],
            "target deadlocked (every thread waits on a futex, which no "
            "thread is left to wake) during step 1");
}

} // namespace
} // namespace cmc::testing
