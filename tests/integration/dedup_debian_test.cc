// Debian's beanstalkd, redis-server and memcached with the whole process as
// the state. Each stores a value that a later reply shows: "put y" then a
// reserve, "SET k y" then "GET k", "set k ... y" then "get k". Their
// globals (.bss, .data, redis's server struct) are the same after the x
// and the y versions, the values lie in their heaps: dedup by those
// regions merged the y path into the x path and the bug was never seen
// (issue 15). The whole process finds it; the regions, audited, find it
// or say that they merged different states.

#include <gtest/gtest.h>

#include "tests/integration/json_report.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class DedupDebian : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

struct Server {
  // Store x, store y, read back: the bytes sent.
  std::vector<std::string> messages;
  std::string forbidden; // a regex of the reply to the read after y
  std::vector<std::string> command;
  std::vector<std::string> regions; // what the README once advised
  // What a check without regions needs (--dedup path where the whole
  // process differs between runs).
  std::vector<std::string> options;
};

Server beanstalkd() {
  return {{"put 0 0 10 1\r\nx\r\n", "put 0 0 10 1\r\ny\r\n",
           "reserve-with-timeout 0\r\n"},
          "RESERVED 1 1\\r\\ny",
          {"/usr/bin/beanstalkd", "-l", "127.0.0.1", "-p", "11300"},
          {".bss", ".data"},
          {}};
}

// beanstalkd counts every command and numbers every job, so orders of
// puts never meet again; tubes used and watched in either order do.
Server beanstalkd_tubes() {
  return {{"use t\r\n", "watch t\r\n"},
          "NOT_FOUND",
          {"/usr/bin/beanstalkd", "-l", "127.0.0.1", "-p", "11300"},
          {},
          {}};
}

// Debian's redis-server allocates with jemalloc, which cmc does not walk:
// its heap is hashed as raw bytes. Its helper threads leave bytes in its
// .bss that differ between runs (jemalloc's and redis's statistics), some
// only now and then, so that --mask-volatile cannot always name them: its
// whole process is not yet a state cmc reads the same way every time, and
// the check by whole process stops with exit 3 now and then (never a
// pass). Each path its own state is what is left (--dedup path).
Server redis() {
  return {{"SET k x\r\n", "SET k y\r\n", "GET k\r\n"},
          R"(\$1\r\ny)",
          {"/usr/bin/redis-server", "--port", "6379", "--save", "",
           "--appendonly", "no"},
          {"server+4:4364"},
          {"--dedup", "path"}};
}

// memcached with its default threads (four workers, its LRU crawler and
// maintainer, the hash table's): under cmc's scheduler they run one at a
// time, in an order that depends on the path alone, so their stacks and
// malloc arenas are where they were in every run, and the whole process
// is the state (before issue 29 it differed between runs: --dedup path).
Server memcached() {
  return {{"set k 0 0 1\r\nx\r\n", "set k 0 0 1\r\ny\r\n", "get k\r\n"},
          "VALUE k 0 1\\r\\ny",
          {"/usr/bin/memcached", "-u", "root", "-l", "127.0.0.1", "-p", "11211",
           "-U", "0"},
          {},
          {}};
}

// text as an argument of -m: its line ends as C escapes.
std::string escaped(const std::string &text) {
  std::string out;
  for (const char c : text) {
    if (c == '\r')
      out += "\\r";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// cmc check of server to depth 3, with extra options.
std::vector<std::string> check(const Server &server,
                               const std::vector<std::string> &extra) {
  std::vector<std::string> args{"check", "-q",          "--json",
                                "-",     "--max-depth", "3"};
  for (const std::string &message : server.messages)
    args.insert(args.end(), {"-m", escaped(message)});
  args.insert(args.end(), extra.begin(), extra.end());
  args.emplace_back("--");
  args.insert(args.end(), server.command.begin(), server.command.end());
  return args;
}

std::vector<std::string> forbidding(const Server &server) {
  return {"--forbid-response", server.forbidden};
}

std::vector<std::string> with_regions(const Server &server) {
  std::vector<std::string> extra = forbidding(server);
  for (const std::string &region : server.regions)
    extra.insert(extra.end(), {"--region", region});
  return extra;
}

// Without --region: y is stored, then read back, in two steps.
void finds_y_in_two_steps(const Server &server) {
  std::vector<std::string> extra = forbidding(server);
  extra.insert(extra.end(), server.options.begin(), server.options.end());
  const Outcome run = run_cmc(check(server, extra));
  ASSERT_EQ(run.status, 1) << run.out << run.err;
  const auto json = run.json();
  const bool path =
      server.options == std::vector<std::string>{"--dedup", "path"};
  EXPECT_EQ(json["state"], path ? "path" : "process");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::array({{{"send", server.messages[1]}},
                                   {{"send", server.messages[2]}}}));
}

// With the regions: either the search still finds y (a region happened to
// differ), or the verdict says that it merged states that differ
// elsewhere. Never a plain "holds".
void regions_find_y_or_say_lossy(const Server &server) {
  const Outcome run = run_cmc(check(server, with_regions(server)));
  const auto json = run.json();
  ASSERT_TRUE(json.is_object()) << run.out << run.err;
  EXPECT_EQ(json["state"], "regions");
  if (run.status == 1) {
    ASSERT_EQ(json["counterexample"].size(), 2U) << run.out;
    return;
  }
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_TRUE(json["abstraction"].is_object()) << run.out;
  EXPECT_GT(json["abstraction"]["lossy_merges"], 0) << run.out;
  EXPECT_TRUE(json["abstraction"]["first"].is_string()) << run.out;
  const Outcome text = run_cmc([&] {
    auto args = check(server, with_regions(server));
    args.erase(args.begin() + 2, args.begin() + 4); // --json -
    return args;
  }());
  EXPECT_NE(text.out.find("under the region abstraction"), std::string::npos)
      << text.out;
}

// Without the forbidden reply the search goes on to depth 3: states that
// the whole process says are equal merge.
nlohmann::json whole_process_holds(const Server &server) {
  const Outcome run = run_cmc(check(server, {}));
  auto json = holding_report(run);
  if (json.empty())
    return json;
  EXPECT_EQ(json["state"], "process");
  EXPECT_EQ(json["complete"], false); // bounded by --max-depth
  EXPECT_GT(json["distinct_states"], 1) << run.out;
  EXPECT_GT(json["dedup_merges"], 0) << run.out;
  return json;
}

TEST_F(DedupDebian, BeanstalkdReservesYWithoutRegions) {
  finds_y_in_two_steps(beanstalkd());
}

TEST_F(DedupDebian, BeanstalkdRegionsFindYOrSayLossy) {
  regions_find_y_or_say_lossy(beanstalkd());
}

TEST_F(DedupDebian, BeanstalkdWholeProcessMerges) {
  const auto json = whole_process_holds(beanstalkd_tubes());
  EXPECT_EQ(json["distinct_states"], 13);
  EXPECT_EQ(json["dedup_merges"], 2);
}

// The same report at -j1 and -j2: every state is captured and
// canonicalised the same in every run of its path.
TEST_F(DedupDebian, BeanstalkdOneAndTwoWorkersGiveTheSameReport) {
  const Outcome one = run_cmc(check(beanstalkd(), {"-j", "1"}));
  const Outcome two = run_cmc(check(beanstalkd(), {"-j", "2"}));
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(answers_of(one.json()), answers_of(two.json()));
}

TEST_F(DedupDebian, RedisEachPathItsOwnStateGetsY) {
  finds_y_in_two_steps(redis());
}

TEST_F(DedupDebian, RedisRegionsFindYOrSayLossy) {
  regions_find_y_or_say_lossy(redis());
}

TEST_F(DedupDebian, MemcachedWholeProcessGetsY) {
  finds_y_in_two_steps(memcached());
}

// Its threads' states the same in every run: the same report at -j1 and
// -j2, and states that the whole process says are equal merge.
TEST_F(DedupDebian, MemcachedThreadsGiveTheSameReportForAnyJobs) {
  const Outcome one = run_cmc(check(memcached(), {"-j", "1"}));
  const Outcome two = run_cmc(check(memcached(), {"-j", "2"}));
  const auto json = holding_report(one);
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json["state"], "process");
  EXPECT_GT(json["dedup_merges"], 0) << one.out;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(answers_of(one.json()), answers_of(two.json()));
}

} // namespace
} // namespace cmc::testing
