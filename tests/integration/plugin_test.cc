// --property plugins (include/cmc/property.h) on demo/lock_server: the
// example plugin lock_grant sees who was granted the lock in the replies.

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Plugins : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> lock_check(const std::string &server,
                                    std::vector<std::string> extra) {
  std::vector<std::string> args{
      "check",    "-q", "--json", "-",       "--property", plugin("lock_grant"),
      "--client", "A",  "-m",     "LOCK\\n", "-m",         "UNLOCK\\n",
      "--client", "B",  "-m",     "LOCK\\n", "-m",         "UNLOCK\\n"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(server), "7000"});
  return args;
}

// No region at all: the plugin finds the bug in the replies alone.
TEST_F(Plugins, LockGrantFindsTheSecondGrantInTheReplies) {
  const Outcome run =
      run_cmc(lock_check("lock_server_bug", {"--max-depth", "3"}));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["violation"], "lock-grant: step 3 granted the lock to "
                               "client A, but client A holds it since step 1");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"client": "A", "send": "LOCK\n"},
                                      {"client": "B", "send": "UNLOCK\n"},
                                      {"client": "A", "send": "LOCK\n"}])"));
  EXPECT_EQ(json["replay"]["properties"],
            nlohmann::json::array({plugin("lock_grant")}));
  // The replay checks the plugin too, and names the same violation.
  const Outcome replay =
      run_cmc({"replay", "--client", "A", "--client", "B", "--property",
               plugin("lock_grant"), "--steps", "A:LOCK\\n", "B:UNLOCK\\n",
               "A:LOCK\\n", "--", demo("lock_server_bug"), "7000"});
  EXPECT_EQ(replay.status, 1) << replay.err;
  EXPECT_NE(replay.out.find("  response to B: \"OK\\n\"\n"), std::string::npos)
      << replay.out;
  EXPECT_NE(replay.out.find("violated: lock-grant: step 3 granted the lock"),
            std::string::npos)
      << replay.out;
}

TEST_F(Plugins, LockGrantHoldsOnTheCorrectServer) {
  const Outcome run = run_cmc(lock_check(
      "lock_server", {"--disconnect", "--region", "held", "--invariant",
                      "exclusive", "--forbid-response", "ERR"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  // The plugin changes what is checked, not the states.
  const Outcome without = run_cmc({"check", "-q",           "--json",
                                   "-",     "--disconnect", "--client",
                                   "A",     "-m",           "LOCK\\n",
                                   "-m",    "UNLOCK\\n",    "--client",
                                   "B",     "-m",           "LOCK\\n",
                                   "-m",    "UNLOCK\\n",    "--region",
                                   "held",  "--",           demo("lock_server"),
                                   "7000"});
  ASSERT_EQ(without.status, 0) << without.err;
  EXPECT_EQ(json["distinct_states"], without.json()["distinct_states"]);
  EXPECT_EQ(json["transitions"], without.json()["transitions"]);
}

TEST_F(Plugins, APluginThatCannotBeLoadedIsOneLineAndExit2) {
  const std::string missing = "/nonexistent/property.so";
  auto args = lock_check("lock_server", {"--max-depth", "1"});
  args[5] = missing;
  const Outcome run = run_cmc(args);
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "cmc: --property " + missing + ": no such file\n");
  // A shared object that is no plugin.
  args[5] = "/lib/x86_64-linux-gnu/libm.so.6";
  const Outcome libm = run_cmc(args);
  EXPECT_EQ(libm.status, 2);
  EXPECT_NE(libm.err.find("it defines no cmc_property"), std::string::npos)
      << libm.err;
}

} // namespace
} // namespace cmc::testing
