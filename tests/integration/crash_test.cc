// --crash: the step "kill the target and start it again on what of its
// files was durable". demo/log_server acknowledges an append once it is
// fsynced, its -DBUG build before (it fsyncs every second append): the
// plugin log_durable says that an acknowledged line is in every later GET.
// Debian's beanstalkd with its binlog and redis-server with its
// append-only file, with and without their fsyncs. The properties are of
// the history (what was acknowledged), which a state does not hold: after
// a crash that lost it, the state is the one a crash alone reaches, and
// dedup would check the property on that path only. Each path is its own
// state (--dedup path), to a bounded depth.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Crash : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> log_check(const std::string &server,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check",  "-q",          "--json",
                                "-",      "--crash",     "--dedup",
                                "path",   "--max-depth", "3",
                                "-m",     "APPEND a\\n", "-m",
                                "GET\\n", "--property",  plugin("log_durable")};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(server), "7000"});
  return args;
}

TEST_F(Crash, IsAnUnknownOptionNowhere) {
  const Outcome run = run_cmc({"check", "--help"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "--crash")) << run.out;
  EXPECT_TRUE(has(run.out, "fsync")) << run.out;
}

// The BUG build acknowledges "a" before it fsyncs: a crash right after
// loses it, and GET no longer lists it.
TEST_F(Crash, FindsAnAcknowledgedAppendLost) {
  const Outcome run = run_cmc(log_check("log_server_bug"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["counterexample"], nlohmann::json::parse(R"([
      {"send": "APPEND a\n"}, {"crash": true, "closed_by_server": [0]},
      {"send": "GET\n"}])"))
      << json["counterexample"].dump();
  EXPECT_EQ(json["violation"], "log-durable: step 3: GET does not list 'a', "
                               "acknowledged at step 1");
  EXPECT_TRUE(json["replay"]["crash"].get<bool>());
}

// Without the crash step the same build holds: what it loses is what was
// never on the disk, not a reply.
TEST_F(Crash, TheBugNeedsTheCrash) {
  auto args = log_check("log_server_bug");
  args.erase(std::find(args.begin(), args.end(), "--crash"));
  const Outcome run = run_cmc(args);
  ASSERT_EQ(run.status, 0) << run.err;
}

// The fixed build fsyncs before it replies: it holds, crashes included:
// 1 + 3 + 9 + 27 paths.
TEST_F(Crash, TheFixedLogHolds) {
  const Outcome run = run_cmc(log_check("log_server"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["distinct_states"], 40);
  EXPECT_EQ(json["transitions"], 39);
}

// The counterexample replays, its crash included, from the report and
// from --steps.
TEST_F(Crash, ReplaysItsCounterexample) {
  const std::string report =
      ::testing::TempDir() + "/crash_report_" +
      std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
      ".json";
  auto args = log_check("log_server_bug");
  *std::find(args.begin(), args.end(), "-") = report;
  const Outcome check = run_cmc(args);
  ASSERT_EQ(check.status, 1) << check.err;
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, "crash")) << replay.out;
  EXPECT_TRUE(has(replay.out, "GET does not list 'a'")) << replay.out;
  const Outcome steps = run_cmc(
      {"replay", "--crash", "--property", plugin("log_durable"), "--steps",
       "APPEND a\\n", "crash", "GET\\n", "--", demo("log_server_bug"), "7000"});
  EXPECT_EQ(steps.status, 1) << steps.out << steps.err;
  // The fixed build keeps "a" over the same steps.
  const Outcome fixed = run_cmc(
      {"replay", "--crash", "--property", plugin("log_durable"), "--steps",
       "APPEND a\\n", "crash", "GET\\n", "--", demo("log_server"), "7000"});
  EXPECT_EQ(fixed.status, 0) << fixed.out << fixed.err;
  EXPECT_TRUE(has(fixed.out, "a\\nEND")) << fixed.out;
  std::filesystem::remove(report);
}

// explore's crash: the same step by hand, then the path as a replay.
TEST_F(Crash, ExploreCrashesByHand) {
  const std::string input =
      ::testing::TempDir() + "/crash_explore_" + std::to_string(getpid());
  std::ofstream(input) << "send APPEND a\\n\ncrash\nsend GET\\n\npath\n";
  const Outcome run = run_cmc_with_input(
      {"explore", "--crash", "--", demo("log_server_bug"), "7000"}, input);
  std::filesystem::remove(input);
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_TRUE(has(run.out, "step 2: crash")) << run.out;
  EXPECT_TRUE(has(run.out, "response: \"END\\n\"")) << run.out;
  EXPECT_TRUE(has(run.out, "--crash --steps 'APPEND a\\n' crash 'GET\\n'"))
      << run.out;
  // Without --crash there is no crash to take.
  std::ofstream(input) << "crash\n";
  const Outcome refused =
      run_cmc_with_input({"explore", "--", demo("log_server"), "7000"}, input);
  std::filesystem::remove(input);
  EXPECT_TRUE(has(refused.out, "crash needs --crash")) << refused.out;
}

// A snapshot keeps no durable versions: --crash replays.
TEST_F(Crash, RefusesSnapshots) {
  auto args = log_check("log_server", {"--mode", "snapshot"});
  const Outcome run = run_cmc(args);
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(has(run.err, "--crash needs --mode replay")) << run.err;
}

class CrashDebian : public Crash {};

// beanstalkd with its binlog: -F never fsyncs, -f0 fsyncs every write.
std::vector<std::string> beanstalkd_crash(const std::string &fsync) {
  return {"check",
          "-q",
          "--json",
          "-",
          "--crash",
          "--dedup",
          "path",
          "--max-depth",
          "3",
          "--writable",
          "binlog",
          "-m",
          R"(put 0 0 10 1\r\nx\r\n)",
          "-m",
          "peek 1\\r\\n",
          "--property",
          plugin("beanstalkd_durable"),
          "--",
          "/usr/bin/beanstalkd",
          "-l",
          "127.0.0.1",
          "-p",
          "11300",
          "-b",
          "binlog",
          "-s",
          "100000",
          fsync};
}

TEST_F(CrashDebian, BeanstalkdWithoutFsyncLosesAnAcknowledgedPut) {
  if (!std::filesystem::exists("/usr/bin/beanstalkd"))
    GTEST_SKIP() << "beanstalkd is not installed (apt-get install beanstalkd)";
  const Outcome run = run_cmc(beanstalkd_crash("-F"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"], nlohmann::json::parse(R"([
      {"send": "put 0 0 10 1\r\nx\r\n"},
      {"crash": true, "closed_by_server": [0]},
      {"send": "peek 1\r\n"}])"))
      << json["counterexample"].dump();
  EXPECT_EQ(json["violation"],
            "beanstalkd-durable: step 3: peek 1 is NOT_FOUND, a job "
            "acknowledged (INSERTED) at step 1");
}

TEST_F(CrashDebian, BeanstalkdFsyncingEveryWriteKeepsIt) {
  if (!std::filesystem::exists("/usr/bin/beanstalkd"))
    GTEST_SKIP() << "beanstalkd is not installed (apt-get install beanstalkd)";
  const Outcome run = run_cmc(beanstalkd_crash("-f0"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["verdict"], "holds");
}

std::vector<std::string> redis_crash(const std::string &appendfsync) {
  return {"check",
          "-q",
          "--json",
          "-",
          "--crash",
          "--dedup",
          "path",
          "--max-depth",
          "3",
          "-m",
          "SET k v\\r\\n",
          "-m",
          "GET k\\r\\n",
          "--property",
          plugin("redis_durable"),
          "--",
          "/usr/bin/redis-server",
          "--port",
          "6379",
          "--save",
          "",
          "--appendonly",
          "yes",
          "--appendfsync",
          appendfsync};
}

TEST_F(CrashDebian, RedisAppendfsyncAlwaysKeepsAnAcknowledgedSet) {
  if (!std::filesystem::exists("/usr/bin/redis-server"))
    GTEST_SKIP() << "redis-server is not installed (apt-get install "
                    "redis-server)";
  const Outcome run = run_cmc(redis_crash("always"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["verdict"], "holds");
}

TEST_F(CrashDebian, RedisAppendfsyncNoLosesIt) {
  if (!std::filesystem::exists("/usr/bin/redis-server"))
    GTEST_SKIP() << "redis-server is not installed (apt-get install "
                    "redis-server)";
  const Outcome run = run_cmc(redis_crash("no"));
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.json()["counterexample"], nlohmann::json::parse(R"([
      {"send": "SET k v\r\n"}, {"crash": true, "closed_by_server": [0]},
      {"send": "GET k\r\n"}])"))
      << run.json()["counterexample"].dump();
}

} // namespace
} // namespace cmc::testing
