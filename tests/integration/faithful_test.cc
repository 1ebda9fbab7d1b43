// Faithful steps: what the target does during a step is what it would do
// outside cmc, and what cmc cannot follow ends the check instead of
// passing it.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Faithful : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

// A server that executes another program during a step: the regions would
// then be read from the new program's memory.
TEST_F(Faithful, ExecDuringAStepStopsTheCheckNamingTheProgram) {
  const Outcome run = run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "EXEC\\n",
                               "--region", "cmc_state", "--invariant", "sticky",
                               "--", target("misbehave"), "serve", "7000"});
  EXPECT_EQ(run.status, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("executed another program ("), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("misbehave) during a step"), std::string::npos)
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

// The target's stderr is a blocking pipe, as under a shell: a program that
// refuses a non-blocking stderr starts.
TEST_F(Faithful, TheTargetsOutputBlocksAsAPipeWould) {
  const Outcome run = run_cmc({"check", "-q", "-m", "SET a\\n", "--region",
                               "cmc_state", "--invariant", "sticky", "--",
                               target("misbehave"), "stderr", "7000"});
  EXPECT_EQ(run.status, 0) << run.err;
}

// Sleeps before the target first waits for a client (a helper thread's, and
// the main thread's after listen, as memcached's) run to their deadlines on
// the virtual clock: without it no message would ever be read.
TEST_F(Faithful, StartUpSleepsRunToTheirDeadlines) {
  const Outcome run =
      run_cmc({"check", "-q", "--json", "-", "-m", "SET a\\n", "-m", "SET b\\n",
               "--region", "cmc_state", "--invariant", "sticky", "--",
               target("late_start"), "7000"});
  EXPECT_EQ(run.status, 0) << run.err;
  const auto report = run.json();
  EXPECT_EQ(report["distinct_states"], 4) << run.out;
  EXPECT_EQ(report["dedup_merges"], 5) << run.out;
}

} // namespace
} // namespace cmc::testing
