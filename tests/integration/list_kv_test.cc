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
// states, 8 x 3 transitions of which 7 found a new state; by the whole
// process the same, every merge audited and none lossy: the last key in
// a register and main's frame slot with the last insertion's pointer into
// the list are written before they are read again, so they are no state.
TEST_F(ListKv, ItsWholeProcessGivesTheSeedsTable) {
  const auto regions = holding_report(run_cmc(list_kv_check(
      "list_kv", {"--region", "present", "--invariant", "sticky"})));
  ASSERT_FALSE(regions.empty());
  EXPECT_EQ(regions["state"], "regions");
  EXPECT_EQ(regions["complete"], true);
  EXPECT_EQ(counts(regions), (std::vector<nlohmann::json>{8, 17, 24}));
  EXPECT_EQ(regions["max_depth"], 3);
  EXPECT_EQ(regions["abstraction"]["merges"], 17);
  EXPECT_EQ(regions["abstraction"]["lossy_merges"], 0)
      << regions["abstraction"];
  const auto process = holding_report(run_cmc(list_kv_check("list_kv")));
  ASSERT_FALSE(process.empty());
  EXPECT_EQ(process["state"], "process");
  EXPECT_EQ(counts(process), (std::vector<nlohmann::json>{8, 17, 24}));
  EXPECT_GE(process["dead_bytes_per_state"]["stack_frames"], 8);
}

// An abstraction that hides two of the cells: the audit finds the merges
// it makes lossy and names where the merged states differ.
TEST_F(ListKv, TheAuditNamesWhatAnAbstractionHides) {
  const auto json = holding_report(
      run_cmc(list_kv_check("list_kv", {"--region", "present:1"})));
  ASSERT_FALSE(json.empty());
  const auto &abstraction = json["abstraction"];
  ASSERT_GT(abstraction["lossy_merges"], 0) << abstraction;
  ASSERT_TRUE(abstraction["first"].is_string());
  const std::string first = abstraction["first"];
  EXPECT_FALSE(has(first, "not seen again")) << first;
  EXPECT_FALSE(has(first, "no byte named")) << first;
  // The first lossy merges are named, each by where its runs of
  // differing bytes start: present[] past the region, the list's nodes.
  EXPECT_GE(abstraction["named_merges"], 1);
  EXPECT_LE(abstraction["named_merges"], abstraction["lossy_merges"]);
  ASSERT_FALSE(abstraction["places"].empty());
  EXPECT_LE(abstraction["places"][0]["merges"], abstraction["named_merges"]);
  EXPECT_TRUE(has(abstraction["places"].dump(), "heap chunk"))
      << abstraction["places"];
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
