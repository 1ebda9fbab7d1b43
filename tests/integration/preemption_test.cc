// Interleavings inside a step (--preemptions) on the worker pool
// (tests/integration/targets/worker_pool.c): four workers fed over a mutex
// and a condition variable, two jobs a message. Its racy mode adds to the
// counter outside the lock, reading it before the reply's write and
// writing it after: a worker switched away from at that write, while the
// other job's worker runs, loses an update ("LOST").

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

std::vector<std::string> pool_check(const std::string &mode,
                                    const std::string &preemptions,
                                    const std::string &jobs = "1",
                                    const std::string &depth = "3") {
  // A bound: main's count of the ADDs is state, so the search would not
  // end without one.
  return {"check",
          "-q",
          "--max-depth",
          depth,
          "-m",
          "ADD a\\n",
          "-m",
          "ADD b\\n",
          "--forbid-response",
          "LOST",
          "--preemptions",
          preemptions,
          "-j",
          jobs,
          "--json",
          "-",
          "--",
          target("worker_pool"),
          mode,
          "7000"};
}

class Preemptions : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(Preemptions, TheRacyPoolHoldsWithoutAndLosesAnUpdateWithOne) {
  const Outcome none = run_cmc(pool_check("racy", "0"));
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.json()["verdict"], "holds");
  EXPECT_EQ(none.json()["preemptions"], 0);

  const std::string report =
      (std::filesystem::temp_directory_path() /
       ("cmc-preemptions-" + std::to_string(getpid()) + ".json"))
          .string();
  auto args = pool_check("racy", "1");
  *std::find(args.begin(), args.end(), "-") = report;
  const Outcome one = run_cmc(args);
  ASSERT_EQ(one.status, 1) << one.err;
  const auto json = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(json["preemptions"], 1);
  // One message, preempted once: the first worker switched away from
  // before the write of its reply, the second worker run in its place.
  const auto &counterexample = json["counterexample"];
  ASSERT_EQ(counterexample.size(), 1U) << counterexample;
  EXPECT_EQ(counterexample[0]["send"], "ADD a\n");
  ASSERT_EQ(counterexample[0]["preempt"].size(), 1U) << counterexample;
  ASSERT_EQ(counterexample[0]["switches"].size(), 1U) << counterexample;
  EXPECT_EQ(counterexample[0]["switches"][0],
            "thread 1 before write, thread 2 ran");
  EXPECT_TRUE(has(json["violation"], "LOST")) << json["violation"];
  EXPECT_TRUE(has(one.out, "--preempt 1:")) << one.out;

  // Replayed from the report, and by hand, it loses the update again.
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, "preempted: thread 1 before write, thread 2 ran"))
      << replay.out;
  const std::string point = counterexample[0]["preempt"][0].dump();
  const Outcome by_hand = run_cmc(
      {"replay", "--forbid-response", "LOST", "--preempt", "1:" + point,
       "--steps", "ADD a\\n", "--", target("worker_pool"), "racy", "7000"});
  EXPECT_EQ(by_hand.status, 1) << by_hand.out << by_hand.err;
  std::filesystem::remove(report);
}

TEST_F(Preemptions, ThePoolUnderItsLockHoldsTheSameForAnyJobs) {
  // Every order of the workers at one preemption in the first step adds
  // under the lock: no update is lost, and many orders reach one state
  // (26 transitions, 16 merges; at depth 3, 806 and 756).
  const Outcome one = run_cmc(pool_check("pool", "1", "1", "1"));
  ASSERT_EQ(one.status, 0) << one.err;
  const auto json = one.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_GT(json["dedup_merges"], 0);
  const Outcome two = run_cmc(pool_check("pool", "1", "2", "1"));
  ASSERT_EQ(two.status, 0) << two.err;
  for (const char *key : {"distinct_states", "dedup_merges", "transitions"})
    EXPECT_EQ(two.json()[key], json[key]) << key;
  // More than without preemptions.
  const Outcome none = run_cmc(pool_check("pool", "0", "1", "1"));
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_GT(json["transitions"], none.json()["transitions"]);
}

TEST_F(Preemptions, AMalformedPreemptIsOneErrorLine) {
  for (const char *preempt :
       {"0:1", "2:1", "1:3,2", "1:", "x", "1:1,2,3,4,5"}) {
    const Outcome run =
        run_cmc({"replay", "--preempt", preempt, "--steps", "ADD a\\n", "--",
                 target("worker_pool"), "racy", "7000"});
    EXPECT_EQ(run.status, 2) << preempt << ": " << run.err;
    EXPECT_EQ(count_of(run.err, "\n"), 1U) << preempt << ": " << run.err;
    EXPECT_TRUE(has(run.err, "--preempt")) << preempt << ": " << run.err;
  }
  const Outcome too_many = run_cmc(pool_check("racy", "5"));
  EXPECT_EQ(too_many.status, 2) << too_many.err;
}

} // namespace
} // namespace cmc::testing
