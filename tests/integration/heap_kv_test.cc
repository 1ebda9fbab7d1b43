// cmc check on demo heap_kv, kv with its cells in the heap: without any
// option the state is the whole process with a canonical glibc heap, and
// the seed's table holds as it does for kv's region.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/integration/json_report.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class HeapKv : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> heap_kv_check(const std::string &binary,
                                       std::vector<std::string> extra = {},
                                       const std::string &set_a = "SET a\\n",
                                       const std::string &set_b = "SET b\\n") {
  std::vector<std::string> args{"check", "-q",  "--json", "-",
                                "-m",    set_a, "-m",     set_b};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(binary), "7000"});
  return args;
}

nlohmann::json holds(const Outcome &run) {
  auto json = holding_report(run);
  if (json.empty())
    return json;
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["counterexample"], nullptr);
  return json;
}

// [SET a, SET b] and [SET b, SET a] build the same list from nodes
// allocated in the other order; the scratch buffers of both messages are
// free chunks holding their text. The canonical heap numbers the nodes
// from the list head and leaves free chunks out: the seed's table.
TEST_F(HeapKv, WholeProcessStateGivesTheSeedsTable) {
  const auto json = holds(run_cmc(heap_kv_check("heap_kv")));
  EXPECT_EQ(json["state"], "process");
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
  EXPECT_EQ(json["max_depth"], 2);
  EXPECT_EQ(json["abstraction"], nullptr); // no regions, nothing to audit
}

// The same process as raw bytes: the nodes' addresses depend on the order
// of the SETs, so [SET a, SET b] and [SET b, SET a] differ: 5 states, 6
// merges, 10 transitions, where the canonical heap gives the seed's 4, 5,
// 8. Sound, but fewer merges. (The message text in the freed scratch
// buffer is no difference: its first 16 bytes, all of "SET a\n", are
// overwritten by the tcache's link and key.)
TEST_F(HeapKv, RawBytesGiveMoreStatesThanTheCanonicalHeap) {
  const auto canonical = holds(run_cmc(heap_kv_check("heap_kv")));
  const auto raw = holds(run_cmc(heap_kv_check("heap_kv", {"--dedup", "raw"})));
  EXPECT_EQ(canonical["state"], "process");
  EXPECT_EQ(raw["state"], "raw");
  const auto counts = [](const nlohmann::json &json) {
    return std::vector<nlohmann::json>{
        json["distinct_states"], json["dedup_merges"], json["transitions"]};
  };
  EXPECT_EQ(counts(canonical), (std::vector<nlohmann::json>{4, 5, 8}));
  EXPECT_EQ(counts(raw), (std::vector<nlohmann::json>{5, 6, 10}));
  EXPECT_EQ(canonical["heap"]["canonical"], true);
  EXPECT_EQ(raw["heap"]["canonical"], false);
}

// Each message asks for the list too, so every step's reply shows the list
// after it and the step before's the list before it: list_sticky checks
// each transition as --invariant sticky checks a region. The bug build's
// SET a frees b's node: the shortest counterexample is SET b, SET a.
//
// A GET as a message of its own would not do: [SET b, SET a] leaves the
// bug build's list as [SET a] leaves it (b's node is a free chunk), so the
// two states merge and the search never sends GET after SET b, SET a. A
// property over history is checked on the first path into a state only;
// and --forbid-response sees one reply, where "a=1" is right after SET a
// alone.
std::vector<std::string> list_sticky(const std::string &binary) {
  return heap_kv_check(binary, {"--property", plugin("list_sticky")},
                       "SET a\\nGET\\n", "SET b\\nGET\\n");
}

TEST_F(HeapKv, BugBuildLosesBFromTheList) {
  const Outcome run = run_cmc(list_sticky("heap_kv_bug"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "SET b\nGET\n"},
                                      {"send": "SET a\nGET\n"}])"));
  EXPECT_EQ(json["violation"],
            "list-sticky: step 2: cell b, listed after step 1, is gone");
}

// The counterexample replayed names what SET a did by the heap's chunks:
// b's node freed, a's allocated, the list head pointing at the new one.
TEST_F(HeapKv, ReplayOfTheBugNamesTheFreedNode) {
  const Outcome check = run_cmc(list_sticky("heap_kv_bug"));
  ASSERT_EQ(check.status, 1) << check.err;
  const std::string report = ::testing::TempDir() + "heap_kv_bug.json";
  std::ofstream(report) << check.out;
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 1) << replay.err;
  const std::string &out = replay.out;
  const auto step2 = out.find("step 2:");
  ASSERT_NE(step2, std::string::npos) << out;
  const std::string second = out.substr(step2);
  EXPECT_TRUE(has(second, "  changed: heap chunk 1 (24 B) freed: 0 \"b\""))
      << out;
  EXPECT_TRUE(has(second, "  changed: heap chunk 1 (24 B) allocated: 0 \"a\""))
      << out;
  EXPECT_TRUE(has(second, "  changed: .bss of heap_kv_bug: cells+0 pointer to "
                          "chunk 1 (freed) -> pointer to chunk 1 (new)\n"))
      << out;
  // The first step allocated b's node and pointed the head at it.
  const std::string first = out.substr(0, step2);
  EXPECT_TRUE(has(first, "  changed: heap chunk 1 (24 B) allocated: 0 \"b\""))
      << out;
  EXPECT_TRUE(has(first, "  changed: .bss of heap_kv_bug: cells+0 null -> "
                         "pointer to chunk 1 (new)\n"))
      << out;
  std::remove(report.c_str());
}

// The GET's reply buffer is one more free chunk: still the seed's table.
TEST_F(HeapKv, CorrectBuildKeepsTheList) {
  const auto json = holds(run_cmc(list_sticky("heap_kv")));
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
}

TEST_F(HeapKv, OneAndTwoWorkersGiveTheSameReport) {
  const auto one = holds(run_cmc(heap_kv_check("heap_kv", {"-j", "1"})));
  const auto two = holds(run_cmc(heap_kv_check("heap_kv", {"-j", "2"})));
  EXPECT_EQ(answers_of(one), answers_of(two));
}

} // namespace
} // namespace cmc::testing
