// cmc check of servers of several processes: demo fork_kv serves each
// connection in a child process and keeps its cells in a file, so a check
// that did not follow the child, or read the files, would see no state
// change at all.

#include <gtest/gtest.h>

#include "tests/integration/json_report.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Processes : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> fork_kv_check(const std::string &binary) {
  return {"check",      "-q",
          "--json",     "-",
          "--property", plugin("list_sticky"),
          "-m",         "SET a\\nGET\\n",
          "-m",         "SET b\\nGET\\n",
          "--",         demo(binary),
          "7000"};
}

// The child per connection holds the seed's table: the file after
// [SET a, SET b] and [SET b, SET a] is the same.
TEST_F(Processes, AChildPerConnectionGivesTheSeedsTable) {
  const Outcome run = run_cmc(fork_kv_check("fork_kv"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
}

// The bug build's child clears cell b in the file at SET a: found in the
// replies, with the shortest counterexample.
TEST_F(Processes, AChildThatLosesACellInTheFileIsFound) {
  const Outcome run = run_cmc(fork_kv_check("fork_kv_bug"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "SET b\nGET\n"},
                                      {"send": "SET a\nGET\n"}])"));
  EXPECT_EQ(json["violation"],
            "list-sticky: step 2: cell b, listed after step 1, is gone");
}

// Replayed, the counterexample fails the same way: the child is started
// again at the connection and serves both steps.
TEST_F(Processes, TheCounterexampleReplays) {
  const Outcome run = run_cmc({"replay", "--property", plugin("list_sticky"),
                               "--steps", "SET b\\nGET\\n", "SET a\\nGET\\n",
                               "--", demo("fork_kv_bug"), "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.out.find("cell b, listed after step 1, is gone"),
            std::string::npos)
      << run.out;
}

} // namespace
} // namespace cmc::testing
