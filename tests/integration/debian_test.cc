// Debian's own beanstalkd, memcached, redis-server, mosquitto, lighttpd,
// webfsd and gearmand (scripts/setup.sh installs them), checked unmodified:
// PIE, stripped, epoll loops, clocks read through the vDSO, seeds from
// /dev/urandom, start-up sleeps, and memcached's and redis's helper threads.
// Two clients each, at a bounded depth.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/integration/beanstalkd_check.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Debian : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

// The check of beanstalkd_check.h, to depth.
std::vector<std::string> beanstalkd_check(int depth) {
  std::vector<std::string> args{"check", "-q",          "--json",
                                "-",     "--max-depth", std::to_string(depth)};
  for (const auto &part : {beanstalkd_options(), {"--"}, beanstalkd_command()})
    args.insert(args.end(), part.begin(), part.end());
  return args;
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

// memcached sleeps at start-up (its main thread, after listen) before it
// serves; cmc runs that sleep to its deadline, or no message would be read.
// Its items live in its slab heap, not in .bss: no region, every path its
// own state, to a bounded depth. A and B each add the key "lock"; A may
// delete it.
std::vector<std::string> memcached_check(std::vector<std::string> extra) {
  std::vector<std::string> args{"check",       "-q",
                                "--json",      "-",
                                "--max-depth", "3",
                                "--dedup",     "path",
                                "--client",    "A",
                                "-m",          R"(add lock 0 0 1\r\nA\r\n)",
                                "-m",          "delete lock\\r\\n",
                                "--client",    "B",
                                "-m",          R"(add lock 0 0 1\r\nB\r\n)"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", "/usr/bin/memcached", "-u", "root", "-l",
                           "127.0.0.1", "-p", "11211", "-U", "0"});
  return args;
}

TEST_F(Debian, MemcachedWithTwoClientsHolds) {
  const Outcome run =
      run_cmc(memcached_check({"--forbid-response", R"(ERROR|\r\n\r\n)"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["distinct_states"], 40);
  EXPECT_EQ(json["transitions"], 39);
}

// The second add of a held key is refused: its reply is read in the step
// that sent it, so the shortest counterexample is the two adds.
TEST_F(Debian, MemcachedRefusesASecondAdd) {
  const Outcome run =
      run_cmc(memcached_check({"--forbid-response", "NOT_STORED"}));
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.json()["counterexample"],
            nlohmann::json::parse(
                R"([{"client": "A", "send": "add lock 0 0 1\r\nA\r\n"},
                                {"client": "A", "send": "add lock 0 0 1\r\nA\r\n"}])"));
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

// The whole struct, its pid included: the pid was volatile (it differed
// between runs) until targets ran in the sandbox's PID namespace, where
// redis is the same pid in every run. It holds with nothing masked, and
// each of three runs finds the same states.
TEST_F(Debian, RedisWholeServerHoldsWithItsPidTheSameInEveryRun) {
  auto args = redis_check({"-j", "2"});
  *std::find(args.begin(), args.end(), "server+4:4364") = "server";
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Outcome run = run_cmc(args);
    ASSERT_EQ(run.status, 0) << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["distinct_states"], 28);
    EXPECT_EQ(json["transitions"], 36);
    EXPECT_FALSE(json.contains("masked") && !json["masked"].empty())
        << json.dump();
  }
}

// A file of the test's own, with text in it, removed with the object.
class TempFile {
public:
  TempFile(const std::string &name, const std::string &text)
      : path_(std::filesystem::temp_directory_path() /
              ("cmc-" + std::to_string(getpid()) + "-" + name)) {
    std::ofstream(path_) << text;
  }
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile() { std::filesystem::remove(path_); }
  [[nodiscard]] std::string path() const { return path_.string(); }

private:
  std::filesystem::path path_;
};

// mosquitto: A subscribes to topic t, B publishes "X" to it. The delivery
// to A is a small write that mosquitto's kernel holds back (Nagle) until
// A's earlier SUBACK is acknowledged; it belongs to B's PUBLISH step all
// the same, with or without set_tcp_nodelay.
Outcome mosquitto_run(const std::string &config) {
  const TempFile file("mosquitto.conf", config);
  const std::string connect = R"(\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00)";
  Outcome run = run_cmc({"check",
                         "-q",
                         "--json",
                         "-",
                         "--once",
                         "--dedup",
                         "path",
                         "--max-depth",
                         "4",
                         "--client",
                         "A",
                         "-m",
                         connect,
                         "-m",
                         R"(\x82\x06\x00\x01\x00\x01t\x00)",
                         "--client",
                         "B",
                         "-m",
                         connect,
                         "-m",
                         R"(\x30\x04\x00\x01tX)",
                         "--forbid-response",
                         "tX",
                         "--",
                         "/usr/sbin/mosquitto",
                         "-c",
                         file.path()});
  return run;
}

nlohmann::json mosquitto_check(const std::string &config) {
  const Outcome run = mosquitto_run(config);
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  return run.json();
}

const char *const kMosquittoConfig =
    "listener 1883 127.0.0.1\nallow_anonymous true\n";

// B's publish reaches A, subscribed, in the step that sends it: 4 steps,
// found after 41 transitions to 42 states.
void expect_publish_delivered(const nlohmann::json &report) {
  EXPECT_EQ(report["violation"],
            "forbidden response: \"0\\x04\\x00\\x01tX\" matches /tX/");
  ASSERT_EQ(report["counterexample"].size(), 4) << report.dump();
  EXPECT_EQ(report["counterexample"][3]["client"], "B");
  EXPECT_EQ(report["counterexample"][3]["send"],
            std::string("0\x04\x00\x01tX", 6));
  EXPECT_EQ(report["transitions"], 41);
  EXPECT_EQ(report["distinct_states"], 42);
}

TEST_F(Debian, MosquittoDeliversThePublishInItsStep) {
  expect_publish_delivered(mosquitto_check(kMosquittoConfig));
  expect_publish_delivered(mosquitto_check(std::string(kMosquittoConfig) +
                                           "set_tcp_nodelay true\n"));
}

// A loaded kernel hands loopback's packets over late (in ksoftirqd): CI saw
// a reset that mosquitto sent reach cmc a step late ("nondeterminism: the
// state after actions [3] had another fingerprint"). A token bucket on the
// targets' loopback makes every packet late; the answer stays the same.
TEST_F(Debian, MosquittoGivesTheSameAnswerOverALateLoopback) {
  setenv("CMC_TEST_SLOW_LOOPBACK", "1", 1);
  const Outcome late = mosquitto_run(kMosquittoConfig);
  unsetenv("CMC_TEST_SLOW_LOOPBACK");
  if (late.status == 3 &&
      late.err.find("tc could not put a token bucket") != std::string::npos)
    GTEST_SKIP() << late.err;
  ASSERT_EQ(late.status, 1) << late.out << late.err;
  expect_publish_delivered(late.json());
}

// lighttpd answers HTTP/1.0 and closes the connection: the next request
// opens a new one and is answered too. Checked with the whole process as
// the state: lighttpd keeps its working directory (getcwd()), whose name
// is the same in every run (it was mkdtemp's, and the check stopped with
// "nondeterminism" at the initial state).
TEST_F(Debian, LighttpdClosesAndTheNextRequestReconnects) {
  const TempFile page("index.html", "hi\n");
  const TempFile config(
      "lighttpd.conf",
      "server.document-root = \"" +
          std::filesystem::path(page.path()).parent_path().string() +
          "\"\nserver.port = 8080\nserver.bind = \"127.0.0.1\"\n");
  const std::string get =
      "GET /" + std::filesystem::path(page.path()).filename().string() +
      R"( HTTP/1.0\r\n\r\n)";
  const Outcome run =
      run_cmc({"replay", "--steps", get, get, "--", "/usr/sbin/lighttpd", "-D",
               "-f", config.path()});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  std::size_t answers = 0;
  for (std::size_t at = run.out.find("response: \"HTTP/1.0 200 OK");
       at != std::string::npos;
       at = run.out.find("response: \"HTTP/1.0 200 OK", at + 1))
    ++answers;
  EXPECT_EQ(answers, 2U) << run.out;
  EXPECT_NE(run.out.find("closed by the server"), std::string::npos);
  const Outcome check =
      run_cmc({"check", "-q", "--json", "-", "-m", get, "--max-depth", "3",
               "--forbid-response", "HTTP/1.0 [45]", "--", "/usr/sbin/lighttpd",
               "-D", "-f", config.path()});
  ASSERT_EQ(check.status, 0) << check.out << check.err;
  EXPECT_EQ(check.json()["state"], "process");
  EXPECT_EQ(check.json()["coverage"][0]["read_whole"], 3);
}

// webfsd keeps what stat() said of a file it served, its access time
// included. Under relatime the first read of a new file sets that time:
// unless a run's reads leave it alone, the first run of a path had another
// state than every later one, and cmc stopped ("nondeterminism", exit 3)
// on a page served for the first time.
TEST_F(Debian, WebfsdServesANewFileTheSameInEveryRun) {
  const TempFile page("page.html", "hi\n");
  const std::filesystem::path path(page.path());
  const std::string get =
      "GET /" + path.filename().string() + R"( HTTP/1.1\r\nHost: a\r\n\r\n)";
  const Outcome check =
      run_cmc({"check", "-q", "--json", "-", "-m", get, "--max-depth", "3",
               "--forbid-response", "HTTP/1.1 [45]", "--", "/usr/bin/webfsd",
               "-F", "-p", "8000", "-r", path.parent_path().string()});
  ASSERT_EQ(check.status, 0) << check.out << check.err;
  EXPECT_EQ(check.json()["coverage"][0]["read_whole"], 3);
}

// gearmand with its default threads (an I/O thread per CPU, a processing
// thread, a signal thread): the whole process is the state, the same in
// every run of a path, at -j1 and -j2. Its admin commands.
TEST_F(Debian, GearmandWithItsDefaultThreadsHoldsTheSameForAnyJobs) {
  const auto gearmand_check = [](const std::string &jobs) {
    return run_cmc({"check",
                    "-q",
                    "--json",
                    "-",
                    "-j",
                    jobs,
                    "--max-depth",
                    "3",
                    "-m",
                    "status\\n",
                    "-m",
                    "version\\n",
                    "-m",
                    "workers\\n",
                    "--forbid-response",
                    "ERR",
                    "--",
                    "/usr/sbin/gearmand",
                    "-L",
                    "127.0.0.1",
                    "-p",
                    "4730",
                    "--log-file=none",
                    "--pid-file=gearmand.pid"});
  };
  const Outcome one = gearmand_check("1");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto json = one.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["state"], "process");
  EXPECT_EQ(json["distinct_states"], 40);
  const Outcome two = gearmand_check("2");
  ASSERT_EQ(two.status, 0) << two.err;
  for (const char *key : {"distinct_states", "dedup_merges", "transitions"})
    EXPECT_EQ(two.json()[key], json[key]) << key;
}

// haproxy in http mode, one thread, answering every request itself. Its
// watchdog arms a POSIX timer on its thread's CPU-time clock for 1 s
// (timer_create with SIGEV_THREAD_ID), which cmc runs on the virtual
// clock: no tick, no signal, and a verdict, the same at every -j.
TEST_F(Debian, HaproxyWithItsWatchdogTimerHolds) {
  const TempFile config(
      "haproxy.cfg",
      "global\n    nbthread 1\ndefaults\n    mode http\n"
      "    timeout client 10s\n    timeout connect 5s\n"
      "    timeout server 10s\nfrontend web\n    bind 127.0.0.1:8080\n"
      "    http-request return status 200 content-type text/plain string "
      "ok\n");
  const std::string first = R"(GET / HTTP/1.1\r\nHost: a\r\n\r\n)";
  const std::string second = R"(GET /b HTTP/1.1\r\nHost: a\r\n\r\n)";
  // Each request is answered on the same connection.
  const Outcome replay =
      run_cmc({"replay", "--steps", first, second, "--", "/usr/sbin/haproxy",
               "-db", "-f", config.path()});
  ASSERT_EQ(replay.status, 0) << replay.out << replay.err;
  EXPECT_EQ(count_of(replay.out, R"(response: "HTTP/1.1 200 OK\r\n)"), 2U)
      << replay.out;
  const auto haproxy_check = [&](const char *jobs) {
    return run_cmc({"check", "-q", "--json", "-", "-j", jobs, "-m", first, "-m",
                    second, "--max-depth", "3", "--forbid-response",
                    "HTTP/1.1 [45]", "--", "/usr/sbin/haproxy", "-db", "-f",
                    config.path()});
  };
  const Outcome one = haproxy_check("1");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto json = one.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["distinct_states"], 15);
  bool timer = false;
  for (const auto &entry : json["sources"])
    timer = timer || entry["source"] == "timer_create";
  EXPECT_TRUE(timer) << json["sources"];
  const Outcome two = haproxy_check("2");
  ASSERT_EQ(two.status, 0) << two.err;
  for (const char *key : {"distinct_states", "dedup_merges", "transitions"})
    EXPECT_EQ(two.json()[key], json[key]) << key;
}

// beanstalkd through a wrapper checks as it does directly (the counts of
// BeanstalkdWithTwoClientsHolds): env execs it, and so does sh -c 'exec
// ...'. The regions (.bss, .data) and the load bias are beanstalkd's.
TEST_F(Debian, BeanstalkdThroughAWrapperChecksAsItDoesDirectly) {
  const std::vector<std::string> beanstalkd = beanstalkd_command();
  std::string line = "exec";
  for (const std::string &word : beanstalkd)
    line += " " + word;
  std::vector<std::string> env{"/usr/bin/env"};
  env.insert(env.end(), beanstalkd.begin(), beanstalkd.end());
  for (const auto &command :
       {env, std::vector<std::string>{"/bin/sh", "-c", line}}) {
    std::vector<std::string> args{"check", "-q",          "--json",
                                  "-",     "--max-depth", "4"};
    for (const auto &part : {beanstalkd_options(), {"--"}, command})
      args.insert(args.end(), part.begin(), part.end());
    const Outcome run = run_cmc(args);
    ASSERT_EQ(run.status, 0) << command[0] << ": " << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["verdict"], "holds");
    EXPECT_EQ(json["distinct_states"], 154) << command[0];
    EXPECT_EQ(json["transitions"], 245) << command[0];
  }
}

// rinetd forwarding to a port nobody listens on accepts each connection,
// fails to connect to its backend and closes the client's at once: the
// connection is closed by the server (before the first step, then at the
// accept of every message's), and no message is read. Not installed by
// scripts/setup.sh everywhere: skipped without it.
TEST_F(Debian, RinetdClosingAtAcceptChecks) {
  if (!std::filesystem::exists("/usr/sbin/rinetd"))
    GTEST_SKIP() << "no /usr/sbin/rinetd (apt-get install rinetd)";
  const TempFile config("rinetd.conf", "127.0.0.1 7000 127.0.0.1 7001\n");
  const std::vector<std::string> rinetd{"--", "/usr/sbin/rinetd", "-f", "-c",
                                        config.path()};
  std::vector<std::string> args{"check", "-q",       "--json",      "-",
                                "-m",    "hello\\n", "--max-depth", "3"};
  args.insert(args.end(), rinetd.begin(), rinetd.end());
  const Outcome check = run_cmc(args);
  ASSERT_EQ(check.status, 0) << check.err;
  const auto json = check.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["coverage"][0]["transitions"], 3);
  EXPECT_EQ(json["coverage"][0]["read_whole"], 0);
  args = {"replay", "--steps", "hello\\n", "hello\\n"};
  args.insert(args.end(), rinetd.begin(), rinetd.end());
  const Outcome replay = run_cmc(args);
  ASSERT_EQ(replay.status, 0) << replay.out << replay.err;
  EXPECT_EQ(count_of(replay.out, "read: 0 of 6 bytes of the message\n"
                                 "  closed by the server: the client\n"),
            2U)
      << replay.out;
}

} // namespace
} // namespace cmc::testing
