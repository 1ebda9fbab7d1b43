// Debian's dnsmasq and unbound (scripts/setup.sh installs them), checked
// unmodified with DNS queries over TCP: both enumerate the network's
// addresses and links over NETLINK_ROUTE (dnsmasq itself, unbound through
// glibc's getifaddrs), whose replies carry the kernel's clock and
// counters; cmc zeroes them (tracer/net/netlink_times.h), so every worker,
// each in a network namespace of its own, reads the same state.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class DnsDebian : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::string escaped_byte(unsigned char byte) {
  constexpr std::string_view kHex = "0123456789abcdef";
  return std::string{'\\', 'x', kHex[byte >> 4U], kHex[byte & 15U]};
}

// A query of type A for name over TCP (its two-byte length first), as the
// C escapes of a message.
std::string query(const std::string &name, int id) {
  std::string bytes{static_cast<char>(id >> 8),
                    static_cast<char>(id & 0xff),
                    1,
                    0,
                    0,
                    1,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0};
  std::size_t begin = 0;
  while (begin <= name.size()) {
    const std::size_t end = std::min(name.find('.', begin), name.size());
    bytes += static_cast<char>(end - begin);
    bytes += name.substr(begin, end - begin);
    begin = end + 1;
  }
  bytes += std::string{0, 0, 1, 0, 1};
  const std::string length{static_cast<char>(bytes.size() >> 8),
                           static_cast<char>(bytes.size() & 0xff)};
  std::string escaped;
  for (const char c : length + bytes)
    escaped += escaped_byte(static_cast<unsigned char>(c));
  return escaped;
}

// The reports of a check at -j 2 and at -j 1: the same counts.
void expect_same_at_every_jobs(const std::vector<std::string> &args,
                               const std::string &source) {
  std::optional<nlohmann::json> first;
  for (const std::string jobs : {"2", "1"}) {
    std::vector<std::string> with_jobs = args;
    with_jobs.insert(with_jobs.begin() + 1, {"-j", jobs});
    const Outcome run = run_cmc(with_jobs);
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json json = run.json();
    EXPECT_EQ(json["verdict"], "holds");
    EXPECT_TRUE(std::ranges::any_of(
        json["sources"],
        [&](const nlohmann::json &row) { return row["source"] == source; }))
        << json["sources"];
    const nlohmann::json counts = {json["distinct_states"],
                                   json["dedup_merges"], json["transitions"]};
    if (!first)
      first = counts;
    EXPECT_EQ(counts, *first) << "-j " << jobs;
    EXPECT_GT(json["dedup_merges"], 0) << "the queries commute";
  }
}

TEST_F(DnsDebian, DnsmasqAnswersTheSameInEveryWorker) {
  expect_same_at_every_jobs({"check",
                             "-q",
                             "--json",
                             "-",
                             "--max-depth",
                             "3",
                             "-m",
                             query("a.example.test", 1),
                             "-m",
                             query("b.example.test", 2),
                             "--",
                             "/usr/sbin/dnsmasq",
                             "-d",
                             "-k",
                             "--port=5353",
                             "--listen-address=127.0.0.1",
                             "--bind-interfaces",
                             "--no-resolv",
                             "--no-hosts",
                             "--address=/example.test/1.2.3.4"},
                            "netlink route replies");
}

TEST_F(DnsDebian, UnboundAnswersTheSameInEveryWorker) {
  std::string directory = "/tmp/cmc-unbound-XXXXXX";
  ASSERT_NE(mkdtemp(directory.data()), nullptr);
  const std::string config = directory + "/unbound.conf";
  std::ofstream(config)
      << "server:\n"
         "  interface: 127.0.0.1\n"
         "  port: 5353\n"
         "  num-threads: 1\n"
         "  chroot: \"\"\n"
         "  username: \"\"\n"
         "  directory: \"" +
             directory +
             "\"\n"
             "  pidfile: \"\"\n"
             "  use-syslog: no\n"
             "  do-ip6: no\n"
             "  local-zone: \"example.test.\" static\n"
             "  local-data: \"a.example.test. IN A 1.2.3.4\"\n"
             "  local-data: \"b.example.test. IN A 5.6.7.8\"\n"
             "remote-control:\n"
             "  control-enable: no\n";
  expect_same_at_every_jobs({"check", "-q", "--json", "-", "--max-depth", "2",
                             "-m", query("a.example.test", 1), "-m",
                             query("b.example.test", 2), "--",
                             "/usr/sbin/unbound", "-d", "-c", config},
                            "netlink route replies");
  std::filesystem::remove_all(directory);
}

} // namespace
} // namespace cmc::testing
