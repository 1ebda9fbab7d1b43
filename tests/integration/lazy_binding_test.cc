// ld.so's lazy binding is no state: the audit of a region check against
// the whole process, and the whole process's counts, on real targets.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class LazyBinding : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

nlohmann::json check_json(const std::string &server,
                          std::vector<std::string> options) {
  std::vector<std::string> args{"check", "-q", "--json", "-"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", demo(server), "7000"});
  const Outcome run = run_cmc(args);
  EXPECT_EQ(run.status, 0) << run.err;
  return run.json();
}

// SET c is no cell of kv: [SET c] merges into [] by the regions, though
// the process read, answered and bound read, strchr, write... through its
// PLT on the way. kv binds each at its first call, kv_now (-z now) at
// start: the audit names the same first difference for both, and as many
// lossy merges.
TEST_F(LazyBinding, ALazilyBoundPltSlotIsNoDifference) {
  const std::vector<std::string> options{"-m",       "SET a\\n", "-m",
                                         "SET c\\n", "--region", "cmc_state"};
  const auto lazy = check_json("kv", options);
  const auto now = check_json("kv_now", options);
  ASSERT_EQ(lazy["state"], "regions");
  EXPECT_EQ(lazy["distinct_states"], 2);
  EXPECT_EQ(lazy["abstraction"]["merges"], 3);
  const std::string first = lazy["abstraction"]["first"].is_string()
                                ? lazy["abstraction"]["first"]
                                : "";
  EXPECT_FALSE(has(first, ".got")) << first;
  // Nor ld.so's count of the lookups it made (_rtld_global), which the
  // first calls raise too: cmc runs the target with LD_BIND_NOW=1.
  EXPECT_FALSE(has(first, "ld-linux")) << first;
  EXPECT_EQ(lazy["abstraction"]["lossy_merges"],
            now["abstraction"]["lossy_merges"]);
  // The first run of bytes named is the same; later ones may name
  // registers holding addresses in the two builds' code.
  const auto first_run = [](const nlohmann::json &report) {
    const std::string named = report["abstraction"]["first"].is_string()
                                  ? report["abstraction"]["first"]
                                  : "";
    return named.substr(0, named.find("; "));
  };
  EXPECT_EQ(first_run(lazy), first_run(now));
}

// Blanking the slots changes nothing else: by the whole process, kv counts
// what kv_now, which has no slot left to bind, counts.
TEST_F(LazyBinding, WholeProcessCountsOfALazyBuildAreThoseOfABoundOne) {
  const std::vector<std::string> options{"-m",       "SET a\\n", "-m",
                                         "SET b\\n", "-m",       "SET c\\n"};
  const auto lazy = check_json("kv", options);
  const auto now = check_json("kv_now", options);
  EXPECT_EQ(lazy["state"], "process");
  for (const char *field :
       {"distinct_states", "dedup_merges", "transitions", "max_depth"})
    EXPECT_EQ(lazy[field], now[field]) << field;
}

} // namespace
} // namespace cmc::testing
