// cmc check on tests/integration/targets/proc_times.c, whose lost update
// hangs on the hundredths of /proc/uptime and the start time of
// /proc/self/stat: cmc answers them from the virtual clock, so every run
// of the check, at any -j, sees the same times and gives the same report.
// It keeps its address's times from netlink too, which cmc zeroes: the
// workers' network namespaces were made at different times.

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class ProcTimes : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

Outcome check_proc_times(const std::string &jobs) {
  return run_cmc({"check", "-q", "--json", "-", "-j", jobs, "--forbid-response",
                  "LOST", "-m", "SET a\\n", "-m", "SET b\\n", "--",
                  target("proc_times"), "7000"});
}

bool lists(const nlohmann::json &rows, const std::string &source) {
  return std::ranges::any_of(rows, [&](const nlohmann::json &row) {
    return row["source"] == source && row["via"] == "syscall";
  });
}

TEST_F(ProcTimes, EveryRunAtEveryJobsGivesTheSameReport) {
  std::optional<nlohmann::json> first;
  for (const std::string jobs : {"2", "1", "2", "1", "2"}) {
    const Outcome run = check_proc_times(jobs);
    ASSERT_EQ(run.status, 0) << run.err;
    nlohmann::json json = run.json();
    EXPECT_EQ(json["verdict"], "holds");
    EXPECT_EQ(json["complete"], true);
    EXPECT_TRUE(
        lists(json["sources"], "/proc/uptime, /proc/stat, /proc/loadavg"))
        << json["sources"];
    EXPECT_TRUE(lists(json["sources"], "/proc/PID/stat")) << json["sources"];
    EXPECT_TRUE(lists(json["sources"], "netlink route replies"))
        << json["sources"];
    for (const auto &row : json["uncontrolled"])
      EXPECT_FALSE(row["source"].get<std::string>().starts_with("/proc"))
          << row;
    const nlohmann::json counts = {json["distinct_states"],
                                   json["dedup_merges"], json["transitions"]};
    if (!first)
      first = counts;
    EXPECT_EQ(counts, *first) << "-j " << jobs;
  }
  // Every state explored, the same counts in every run: the times SET b
  // reads are the same in every run of a path. kv's 5, 6, 10 (its read
  // buffer on its stack holds the last message): what SET b's reads of
  // /proc left in the red zone of the wait is dead (9, 10, 18 with it).
  EXPECT_EQ(*first, nlohmann::json::parse("[5, 6, 10]"));
}

// A server that keeps what TCP_INFO says of its client's connection (exim4
// does): its round-trip time and the time since the last data differ run
// to run; zeroed, the check holds with the counts of one that keeps
// nothing, and the report lists the source.
TEST_F(ProcTimes, TcpInfoTimesAreNoState) {
  const Outcome run =
      run_cmc({"check", "-q", "--json", "-", "-m", "x", "-m", "yy",
               "--max-depth", "3", "--", target("replies"), "tcpinfo", "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_TRUE(lists(json["sources"], "TCP_INFO")) << json["sources"];
}

} // namespace
} // namespace cmc::testing
