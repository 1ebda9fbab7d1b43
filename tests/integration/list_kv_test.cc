// cmc check on demo list_kv, a server written with no thought of a
// checker: its cells a sorted list of malloc'd nodes, a scratch buffer
// per message, nothing cleared.

#include <gtest/gtest.h>

#include "tests/integration/json_report.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class ListKv : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> list_kv_check(const std::string &binary,
                                       std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check",    "-q", "--json",   "-",  "-m",
                                "SET a\\n", "-m", "SET b\\n", "-m", "SET c\\n"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(binary), "7000"});
  return args;
}

std::vector<nlohmann::json> counts(const nlohmann::json &json) {
  return {json["distinct_states"], json["dedup_merges"], json["transitions"]};
}

// By present[], a byte per cell: the seed's table for three cells, 2^3
// states, 8 x 3 transitions of which 7 found a new state. Every merge is
// audited against the whole process; one is lossy exactly when the whole
// process tells more states apart, and then the audit names a byte.
TEST_F(ListKv, ItsCellsGiveTheSeedsTableAndTheAuditNamesWhatDiffers) {
  const auto regions = holding_report(run_cmc(list_kv_check(
      "list_kv", {"--region", "present", "--invariant", "sticky"})));
  ASSERT_FALSE(regions.empty());
  EXPECT_EQ(regions["state"], "regions");
  EXPECT_EQ(regions["complete"], true);
  EXPECT_EQ(counts(regions), (std::vector<nlohmann::json>{8, 17, 24}));
  EXPECT_EQ(regions["max_depth"], 3);
  EXPECT_EQ(regions["abstraction"]["merges"], 17);
  const auto process = holding_report(run_cmc(list_kv_check("list_kv")));
  ASSERT_FALSE(process.empty());
  const bool process_tells_more = process["distinct_states"] > 8;
  EXPECT_EQ(regions["abstraction"]["lossy_merges"] > 0, process_tells_more);
  if (process_tells_more) {
    ASSERT_TRUE(regions["abstraction"]["first"].is_string());
    const std::string first = regions["abstraction"]["first"];
    EXPECT_FALSE(has(first, "not seen again")) << first;
    EXPECT_FALSE(has(first, "no byte named")) << first;
    // The last key main's loop kept in a register is written again before
    // it is read: the liveness past read()'s return leaves it out.
    EXPECT_FALSE(has(first, "registers of thread")) << first;
    // The first lossy merges are named, each by where its runs of
    // differing bytes start.
    const auto &abstraction = regions["abstraction"];
    EXPECT_GE(abstraction["named_merges"], 1);
    EXPECT_LE(abstraction["named_merges"], abstraction["lossy_merges"]);
    ASSERT_FALSE(abstraction["places"].empty());
    EXPECT_LE(abstraction["places"][0]["merges"], abstraction["named_merges"]);
    EXPECT_TRUE(has(abstraction["places"][0]["place"], "stack of thread 1+"))
        << abstraction["places"];
  }
}

// The bug build's SET a frees b's node: the shortest counterexample is
// SET b, SET a.
TEST_F(ListKv, TheBugLosesCellB) {
  const Outcome run = run_cmc(list_kv_check(
      "list_kv_bug", {"--region", "present", "--invariant", "sticky"}));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "SET b\n"},
                                      {"send": "SET a\n"}])"));
  EXPECT_EQ(json["violation"], "sticky: byte 1 of present went 01 -> 00");
}

} // namespace
} // namespace cmc::testing
