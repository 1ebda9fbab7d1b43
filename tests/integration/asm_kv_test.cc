// cmc check on asm_kv, whose reads and writes are inline system calls in a
// static-pie binary: the seed's reference results, as for kv.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class AsmKv : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

Outcome check_sticky(const std::string &binary) {
  return run_cmc({"check", "-q", "--json", "-", "-m", "SET a\\n", "-m",
                  "SET b\\n", "--region", "cmc_state", "--invariant", "sticky",
                  "--", demo(binary), "7000"});
}

// Every field of expected has its value in the report of run.
void expect_report(const Outcome &run, const char *expected) {
  const auto report = run.json();
  ASSERT_TRUE(report.is_object()) << run.out << run.err;
  const auto fields = nlohmann::json::parse(expected);
  for (const auto &[key, value] : fields.items())
    EXPECT_EQ(report.value(key, nlohmann::json("(missing)")), value) << key;
}

TEST_F(AsmKv, CorrectBuildHolds) {
  const Outcome run = check_sticky("asm_kv");
  EXPECT_EQ(run.status, 0) << run.err;
  expect_report(run, R"({"verdict": "holds", "complete": true,
      "distinct_states": 4, "dedup_merges": 5, "transitions": 8,
      "max_depth": 2, "counterexample": null, "violation": null,
      "error": null})");
}

TEST_F(AsmKv, BugBuildLosesB) {
  const Outcome run = check_sticky("asm_kv_bug");
  EXPECT_EQ(run.status, 1) << run.err;
  expect_report(run, R"({"verdict": "violated",
      "counterexample": [{"send": "SET b\n"}, {"send": "SET a\n"}],
      "violation": "sticky: byte 1 of cmc_state went 01 -> 00",
      "error": null})");
}

} // namespace
} // namespace cmc::testing
