// cmc check on demo clock_kv: the vDSO clock under control, and --tick.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

Outcome check_clock_kv(const std::string &binary,
                       std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",    "-m",        "SET a\\n", "-m",       "SET b\\n",
      "--region", "cmc_state", "--region", "last_set", "--invariant",
      "sticky",   "--json",    "-",        "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(binary), "7000"});
  return run_cmc(args);
}

bool lists_source(const nlohmann::json &report, const std::string &source,
                  const std::string &via) {
  for (const auto &entry : report["sources"])
    if (entry["source"] == source && entry["via"] == via)
      return true;
  return false;
}

class ClockKv : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(ClockKv, TheTimeOfTheLastSetDedupsUnderTheVirtualClock) {
  const Outcome run = check_clock_kv("clock_kv");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_TRUE(lists_source(json, "clock_gettime", "vdso")) << json["sources"];
  EXPECT_TRUE(lists_source(json, "AT_RANDOM", "other")) << json["sources"];
}

TEST_F(ClockKv, TheLateBugHidesWithoutTicks) {
  const Outcome run = check_clock_kv("clock_kv_bug");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["distinct_states"], 4);
}

TEST_F(ClockKv, ATickOfTenSecondsFindsTheLateBug) {
  const Outcome run = check_clock_kv("clock_kv_bug", {"--tick", "10s"});
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(
                R"([{"send":"SET b\n"},{"tick":"10s"},{"send":"SET a\n"}])"));
  EXPECT_EQ(json["violation"], "sticky: byte 1 of cmc_state went 01 -> 00");
  EXPECT_EQ(json["tick"], "10s");
}

TEST_F(ClockKv, TicksAreBoundedAndTheBoundIsSaid) {
  const Outcome run = check_clock_kv("clock_kv", {"--tick", "10s"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["complete"], false);
  EXPECT_EQ(json["max_ticks"], 1);
  EXPECT_GT(json["distinct_states"], 4);
}

TEST_F(ClockKv, MaxTicksWithoutTickIsAUsageError) {
  const Outcome run = check_clock_kv("clock_kv", {"--max-ticks", "2"});
  EXPECT_EQ(run.status, 2) << run.err;
  const Outcome bad = check_clock_kv("clock_kv", {"--tick", "soon"});
  EXPECT_EQ(bad.status, 2) << bad.err;
}

} // namespace
} // namespace cmc::testing
