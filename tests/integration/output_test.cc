// A target's stdout and stderr never block it: targets/chatty writes 2 MB
// to each per message, twice what its output pipe holds, and is checked
// as the same server writing nothing is; what cmc did not keep of that
// output is said where the output is shown.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

constexpr const char *kTwoMegabytes = "2000000";

std::vector<std::string> chatty_check(const std::string &mode,
                                      const std::string &out,
                                      const std::string &err) {
  return {"check",       "-q",     "--json",   "-",
          "--mode",      mode,     "-m",       "a\\n",
          "-m",          "b\\n",   "--region", "cmc_state",
          "--invariant", "sticky", "--",       target("chatty"),
          "7000",        out,      err};
}

class ChattyTarget : public ::testing::TestWithParam<std::string> {};

// The verdict and every count are those of the quiet server (demo/kv's:
// 4 states, 5 merges), in both modes.
TEST_P(ChattyTarget, HoldsWithTheCountsOfAQuietOne) {
  const Outcome quiet = run_cmc(chatty_check(GetParam(), "0", "0"));
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  const Outcome chatty =
      run_cmc(chatty_check(GetParam(), kTwoMegabytes, kTwoMegabytes));
  ASSERT_EQ(chatty.status, 0) << chatty.err;
  const auto json = chatty.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
  for (const char *key : {"distinct_states", "dedup_merges", "transitions"})
    EXPECT_EQ(json[key], quiet.json()[key]) << key;
}

INSTANTIATE_TEST_SUITE_P(Modes, ChattyTarget,
                         ::testing::Values("snapshot", "replay"));

// The crash names the last line the target wrote after its 2 MB, and how
// many bytes cmc did not keep: 22 bytes to stdout ("chatty: stdout done
// c\n") and 2,000,000 to stderr, of which the first and last 4 KiB kept.
TEST(ChattyOutput, TheReportSaysWhatWasNotKept) {
  const std::string said = "target killed by SIGABRT during step 1; it last "
                           "wrote \"chatty: stderr done c\" (1991830 of the "
                           "2000022 bytes it wrote were not kept: cmc keeps "
                           "the first and last 4 KiB)";
  const Outcome check =
      run_cmc({"check", "-q", "--json", "-", "-m", "a\\n", "-m", "crash\\n",
               "--", target("chatty"), "7000", "0", kTwoMegabytes});
  ASSERT_EQ(check.status, 1) << check.err;
  EXPECT_EQ(check.json()["violation"], said);
  // Replay keeps the output of its one run, two steps of it.
  const Outcome replay =
      run_cmc({"replay", "--steps", "a\\n", "crash\\n", "--", target("chatty"),
               "7000", "0", kTwoMegabytes});
  EXPECT_EQ(replay.status, 1) << replay.err;
  EXPECT_TRUE(has(replay.out + replay.err,
                  "during step 2; it last wrote \"chatty: stderr done c\" "
                  "(3991852 of the 4000044 bytes it wrote were not kept"))
      << replay.out.substr(replay.out.size() - 600);
}

} // namespace
} // namespace cmc::testing
