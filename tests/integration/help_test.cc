// What cmc says of itself: its version, its help, its usage errors, and
// the versions and keys every JSON report carries (docs/report-format.md).

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

// "0.25.0", from cmc --version.
std::string version_of_cmc() {
  const Outcome run = run_cmc({"--version"});
  EXPECT_EQ(run.status, 0) << run.err;
  std::smatch match;
  static const std::regex kVersion("^cmc ([0-9]+\\.[0-9]+\\.[0-9]+)\n$");
  EXPECT_TRUE(std::regex_match(run.out, match, kVersion)) << run.out;
  return match.empty() ? "" : match[1].str();
}

TEST(Help, VersionIsTheProjectVersion) {
  EXPECT_EQ(version_of_cmc(), CMC_PROJECT_VERSION);
  EXPECT_EQ(run_cmc({"--version"}).err, "");
}

TEST(Help, EveryValueHasAName) {
  for (const char *command :
       {"check", "simulate", "scan", "replay", "explore"}) {
    const Outcome run = run_cmc({command, "--help"});
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out.find(" TEXT"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("UINT"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("Example"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("Exit status"), std::string::npos) << run.out;
  }
  const std::string check = run_cmc({"check", "--help"}).out;
  for (const char *name :
       {"--region SYMBOL[+OFF][:LEN]", "--tick DURATION", "--json FILE",
        "--dot FILE", "--forbid-response REGEX", "--max-depth N",
        "--snapshot-memory MIB", "--step-timeout SECONDS",
        "-m,--message MESSAGE", "cmc check -m 'SET a\\n'"})
    EXPECT_NE(check.find(name), std::string::npos) << name << "\n" << check;
  const std::string top = run_cmc({"--help"}).out;
  EXPECT_NE(top.find("--version"), std::string::npos) << top;
  EXPECT_NE(top.find("Example"), std::string::npos) << top;
}

// CLI11's errors, like cmc's own: one line that starts with "cmc:", the
// option and why, where to look; exit 2; nothing on stdout.
TEST(Help, AMalformedCommandLineIsOneLine) {
  const auto expect_usage = [](const std::vector<std::string> &args,
                               const std::string &part) {
    const Outcome run = run_cmc(args);
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_TRUE(run.err.starts_with("cmc: ")) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find(part), std::string::npos) << run.err;
  };
  expect_usage({"check", "-m", "x", "--max-depth", "abc"},
               "--max-depth = abc (see cmc check --help)");
  expect_usage({"check", "-m", "x", "--port", "0"}, "--port: Value 0");
  expect_usage({"check", "-m", "x", "--dedup", "nonsense"}, "--dedup:");
  expect_usage({"scan", "--json"}, "--json: 1 required FILE missing");
  expect_usage({"check", "-m", "x", "--no-such-option"}, "--no-such-option");
  expect_usage({"frob"}, "unknown command 'frob': give check, simulate, "
                         "scan, replay or explore (see cmc --help)");
  expect_usage({}, "A subcommand is required (see cmc --help)");
}

TEST(JsonReport, EveryReportCarriesItsVersions) {
  const std::string version = version_of_cmc();
  const Outcome holds =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
               "cmc_state", "--invariant", "sticky", "--json", "-", "--",
               demo("kv"), "7000"});
  ASSERT_EQ(holds.status, 0) << holds.err;
  const Outcome error = run_cmc({"check", "-q", "-m", "SET a\\n", "--json", "-",
                                 "--", "/nonexistent/kv", "7000"});
  EXPECT_EQ(error.status, 3) << error.err;
  const Outcome scan = run_cmc({"scan", "--json", "-", demo("kv")});
  EXPECT_EQ(scan.status, 0) << scan.err;
  for (const Outcome *run : {&holds, &error, &scan}) {
    const nlohmann::json json = run->json();
    ASSERT_TRUE(json.is_object()) << run->out;
    EXPECT_EQ(json["format_version"], 1);
    EXPECT_EQ(json["cmc_version"], version);
  }
  // An error report has the keys of a verdict, null where it has nothing.
  const nlohmann::json error_report = error.json();
  const nlohmann::json holding_report = holds.json();
  EXPECT_EQ(error_report.size(), holding_report.size()) << error.out;
  for (const auto &[key, value] : holding_report.items())
    EXPECT_TRUE(error_report.contains(key)) << key;
  EXPECT_EQ(error_report["verdict"], "error");
  EXPECT_EQ(error_report["state"], nullptr);
  EXPECT_EQ(holding_report["state"], "regions");
}

} // namespace
} // namespace cmc::testing
