// Debian's own beanstalkd and redis-server (scripts/setup.sh installs
// them), checked unmodified: PIE, stripped, epoll loops, clocks read
// through the vDSO, seeds from /dev/urandom, and redis's helper threads.
// Two clients each, at a bounded depth.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Debian : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

// A reserves what A put while B tries to reserve too; every client may
// also disconnect (beanstalkd then releases the jobs it holds). The state
// is beanstalkd's .bss and .data: it has no symbols. The plugin
// beanstalkd_reserve checks that no job is reserved by both at once.
std::vector<std::string> beanstalkd_check(int depth) {
  return {"check",
          "-q",
          "--json",
          "-",
          "--max-depth",
          std::to_string(depth),
          "--disconnect",
          "--client",
          "A",
          "-m",
          "put 0 0 10 1\\r\\nx\\r\\n",
          "-m",
          "reserve-with-timeout 0\\r\\n",
          "--client",
          "B",
          "-m",
          "reserve-with-timeout 0\\r\\n",
          "--forbid-response",
          "INTERNAL_ERROR|BAD_FORMAT|UNKNOWN_COMMAND",
          "--property",
          plugin("beanstalkd_reserve"),
          "--region",
          ".bss",
          "--region",
          ".data",
          "--",
          "/usr/bin/beanstalkd",
          "-l",
          "127.0.0.1",
          "-p",
          "11300"};
}

TEST_F(Debian, BeanstalkdWithTwoClientsHolds) {
  const Outcome run = run_cmc(beanstalkd_check(4));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], false); // bounded by --max-depth
  // Equal at every -j: the state (its memory, the virtual clock, the
  // connected clients) is the same in every run of a path.
  EXPECT_EQ(json["distinct_states"], 154);
  EXPECT_EQ(json["transitions"], 245);
  const Outcome one = run_cmc([] {
    auto args = beanstalkd_check(4);
    args.insert(args.begin() + 1, {"-j", "1"});
    return args;
  }());
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.json()["distinct_states"], 154);
}

// With its binlog (-b binlog, relative): each run writes a private copy
// of binlog/ (--writable), whose files are in the state. -s keeps the
// binlog file small: beanstalkd preallocates it, 10 MB by default, in
// every run. The same states at -j1 and -j2, and as many as without.
TEST_F(Debian, BeanstalkdWithABinlogIsDeterministic) {
  for (const char *jobs : {"1", "2"}) {
    auto args = beanstalkd_check(4);
    args.insert(args.begin() + 1, {"-j", jobs, "--writable", "binlog"});
    args.insert(args.end(), {"-b", "binlog", "-s", "100000"});
    const Outcome run = run_cmc(args);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.json()["distinct_states"], 154);
    EXPECT_EQ(run.json()["transitions"], 245);
  }
}

// Without --writable, an absolute binlog directory is refused: every run
// would share it (and its lock).
TEST_F(Debian, BeanstalkdWithAnAbsoluteBinlogNeedsWritable) {
  auto args = beanstalkd_check(1);
  args.insert(args.end(), {"-b", "/var/tmp"});
  const Outcome run = run_cmc(args);
  EXPECT_EQ(run.status, 3);
  EXPECT_NE(run.err.find("writes /var/tmp/lock"), std::string::npos) << run.err;
}

// redis's server struct, from .dynsym, but its first field: the pid. The
// plugin redis_lock checks that SET lock NX succeeds for one client at a
// time until a DEL.
std::vector<std::string> redis_check(std::vector<std::string> extra) {
  std::vector<std::string> args{"check",       "-q",
                                "--json",      "-",
                                "--max-depth", "3",
                                "--client",    "A",
                                "-m",          "SET lock A NX\\r\\n",
                                "-m",          "DEL lock\\r\\n",
                                "--client",    "B",
                                "-m",          "SET lock B NX\\r\\n",
                                "--region",    "server+4:4364",
                                "--property",  plugin("redis_lock")};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", "/usr/bin/redis-server", "--port", "6379",
                           "--save", "", "--appendonly", "no"});
  return args;
}

TEST_F(Debian, RedisWithTwoClientsAndItsHelperThreadsHolds) {
  const Outcome run = run_cmc(redis_check({"--forbid-response", "-ERR"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["distinct_states"], 28);
  EXPECT_EQ(json["transitions"], 36);
}

TEST_F(Debian, RedisRefusesASecondLockHolder) {
  // A response property that the real server breaks: the second SET NX
  // is answered with a null reply ("$-1"), first after A then B set it.
  const Outcome run = run_cmc(redis_check({"--forbid-response", "\\$-1"}));
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(
      run.json()["counterexample"],
      nlohmann::json::parse(R"([{"client": "A", "send": "SET lock A NX\r\n"},
                                      {"client": "A", "send": "SET lock A NX\r\n"}])"));
}

// B may UNLINK the key, which the plugin does not count as a release: a
// lock by SET NX alone is not safe from other clients, and redis_lock says
// so.
TEST_F(Debian, RedisLockIsBrokenByAnotherClientsUnlink) {
  auto args = redis_check({});
  const auto b = std::find(args.begin(), args.end(), "SET lock B NX\\r\\n");
  args.insert(b + 1, {"-m", "UNLINK lock\\r\\n"});
  const Outcome run = run_cmc(args);
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["violation"],
            "redis-lock: step 3: SET lock NX succeeded for client A, but "
            "client A holds the lock since step 1");
  EXPECT_EQ(
      json["counterexample"],
      nlohmann::json::parse(R"([{"client": "A", "send": "SET lock A NX\r\n"},
                                {"client": "B", "send": "UNLINK lock\r\n"},
                                {"client": "A", "send": "SET lock A NX\r\n"}])"));
}

// The whole struct: its pid differs between runs, and the check says so.
TEST_F(Debian, RedisPidIsNamedAsVolatile) {
  auto args = redis_check({});
  *std::find(args.begin(), args.end(), "server+4:4364") = "server";
  const Outcome run = run_cmc(args);
  EXPECT_EQ(run.status, 3) << run.err;
  EXPECT_NE(run.err.find("server+0"), std::string::npos) << run.err;
}

// With --mask-volatile the whole struct works: the pid's bytes are masked
// as they show. Its second byte changes only when the pids cross a
// multiple of 256, often between the run that recorded a state and a later
// one; each of three runs must find the same states.
TEST_F(Debian, RedisWholeServerWithVolatileBytesMaskedHolds) {
  auto args = redis_check({"-j", "2", "--mask-volatile"});
  *std::find(args.begin(), args.end(), "server+4:4364") = "server";
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Outcome run = run_cmc(args);
    ASSERT_EQ(run.status, 0) << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["distinct_states"], 28);
    EXPECT_EQ(json["transitions"], 36);
    EXPECT_EQ(json["masked"][0], "server+0") << json.dump();
    for (const auto &name : json["masked"])
      EXPECT_TRUE(name == "server+0" || name == "server+1" ||
                  name == "server+2" || name == "server+3")
          << json.dump();
  }
}

} // namespace
} // namespace cmc::testing
