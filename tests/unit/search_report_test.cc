// What `cmc check` says of the state kind and of a lossy region
// abstraction, in its text and JSON reports.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/report/report.h"
#include "app/report/verdict_lines.h"

namespace cmc::app {
namespace {

StepNames kv_names(executor::StateKind state) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->messages = {"SET a\n", "SET b\n"};
  spec->regions = {decoder::Region{"cmc_state", 0, 2}};
  spec->state = state;
  spec->audit = state == executor::StateKind::kRegions;
  StepNames names;
  names.spec = spec;
  return names;
}

search::Report kv_holds() {
  search::Report report;
  report.distinct_states = 4;
  report.dedup_merges = 5;
  report.transitions = 8;
  report.max_depth = 2;
  report.coverage = {{4, 4, ""}, {4, 4, ""}};
  return report;
}

search::Report lossy_report() {
  search::Report report = kv_holds();
  search::Abstraction abstraction;
  abstraction.merges = 5;
  abstraction.lossy_merges = 2;
  abstraction.first =
      search::LossyMerge{{0, 1}, {1, 0}, "heap chunk 5 (32 B)+24 'x' vs 'y'"};
  report.abstraction = abstraction;
  return report;
}

std::string printed(const search::Report &report, const StepNames &names) {
  std::FILE *file = std::tmpfile();
  print_report(file, report, names);
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file))
    text.push_back(static_cast<char>(c));
  std::fclose(file);
  return text;
}

constexpr const char *kLossyLine =
    "holds under the region abstraction: 2 of 5 merges joined states that "
    "differ elsewhere (first: heap chunk 5 (32 B)+24 'x' vs 'y', after paths "
    "[send \"SET a\\n\", send \"SET b\\n\"] and [send \"SET b\\n\", send "
    "\"SET a\\n\"])";

TEST(CheckReport, ALossyAbstractionIsTheFirstLine) {
  const StepNames names = kv_names(executor::StateKind::kRegions);
  const search::Report report = lossy_report();
  EXPECT_EQ(abstraction_caveat(report, names), kLossyLine);
  const std::string text = printed(report, names);
  EXPECT_TRUE(text.starts_with(std::string(kLossyLine) + "\nholds: 4 "))
      << text;
  EXPECT_NE(text.find("\nstate: the regions cmc_state (--dedup regions); 5 "
                      "of 5 merges audited against the whole process, 2 "
                      "lossy\n"),
            std::string::npos)
      << text;
  const nlohmann::json json = report_json(report, names);
  EXPECT_EQ(json["state"], "regions");
  EXPECT_EQ(json["abstraction"]["merges"], 5);
  EXPECT_EQ(json["abstraction"]["lossy_merges"], 2);
  EXPECT_EQ(json["abstraction"]["first"], "heap chunk 5 (32 B)+24 'x' vs 'y'");
  EXPECT_EQ(
      json["abstraction"]["first_paths"],
      nlohmann::json::parse(R"([[{"send": "SET a\n"}, {"send": "SET b\n"}],
                                      [{"send": "SET b\n"}, {"send": "SET a\n"}]])"));
}

// A violation is a real path: it stays first, the caveat follows it.
TEST(CheckReport, AViolationStaysFirst) {
  search::Report report = lossy_report();
  report.verdict = search::Verdict::kViolated;
  report.counterexample = {1, 0};
  report.violation = "sticky: byte 1 of cmc_state went 01 -> 00";
  const std::string text =
      printed(report, kv_names(executor::StateKind::kRegions));
  EXPECT_TRUE(text.starts_with("violated: sticky")) << text;
  EXPECT_NE(text.find("\nregion abstraction: 2 of 5 merges joined states"),
            std::string::npos)
      << text;
}

TEST(CheckReport, TheProcessStateNamesItsHeap) {
  const StepNames names = kv_names(executor::StateKind::kProcess);
  search::Report report;
  report.heap.allocator = "glibc malloc";
  report.heap.canonical = true;
  report.heap.arenas = 5;
  report.heap.chunks = 3;
  report.heap.garbage_chunks = 1;
  report.heap.free_chunks = 2;
  report.bytes_read = 3000;
  report.bytes_hashed = 1500;
  report.dead_register_bytes = 264;
  report.dead_red_zone_bytes = 192;
  report.dead_frame_bytes = 48;
  report.runs_measured = 3;
  EXPECT_NE(printed(report, names)
                .find("\nliveness: 168 bytes dead per state "
                      "(registers 88, red zones 64, stack frames 16)\n"),
            std::string::npos);
  EXPECT_NE(printed(report, names)
                .find("\nstate: the whole process (--dedup process); heap: "
                      "glibc malloc, 5 arenas walked: 3 chunks in use, 1 "
                      "unreachable (left out), 2 free; 1000 bytes read, 500 "
                      "hashed per state\n"),
            std::string::npos);
  const nlohmann::json json = report_json(report, names);
  EXPECT_EQ(json["state"], "process");
  EXPECT_EQ(json["abstraction"], nullptr);
  EXPECT_EQ(json["heap"]["chunks"], 3);
  EXPECT_EQ(json["heap"]["arenas"], 5);
  EXPECT_EQ(json["heap"]["garbage_chunks"], 1);
  EXPECT_EQ(json["bytes_read_per_state"], 1000);
  EXPECT_EQ(json["bytes_hashed_per_state"], 500);
  EXPECT_EQ(json["dead_bytes_per_state"]["registers"], 88);
  EXPECT_EQ(json["dead_bytes_per_state"]["red_zones"], 64);
  EXPECT_EQ(json["dead_bytes_per_state"]["stack_frames"], 16);

  report.heap = {"raw bytes (no glibc malloc arena found)", false};
  EXPECT_NE(printed(report, kv_names(executor::StateKind::kRaw))
                .find("\nstate: the whole process, every byte as read "
                      "(--dedup raw); heap: raw bytes (no glibc malloc arena "
                      "found); "),
            std::string::npos);
}

// The keys of a JSON object, in order.
std::vector<std::string> keys_of(const nlohmann::json &json) {
  std::vector<std::string> keys;
  for (const auto &[key, value] : json.items())
    keys.push_back(key);
  return keys;
}

// A report reader finds the same keys whatever the verdict: an error that
// stops the check before a verdict has them all, null where it has none.
TEST(CheckReport, EveryVerdictHasTheSameKeys) {
  const StepNames names = kv_names(executor::StateKind::kRegions);
  search::Report violated = lossy_report();
  violated.verdict = search::Verdict::kViolated;
  violated.counterexample = {1, 0};
  violated.violation = "sticky: byte 1 of cmc_state went 01 -> 00";
  search::Report interrupted;
  interrupted.interrupted = true;
  const nlohmann::json holds = report_json(lossy_report(), names);
  const nlohmann::json error = error_json("cannot start the target");
  EXPECT_EQ(holds["format_version"], kReportFormatVersion);
  EXPECT_EQ(error["format_version"], kReportFormatVersion);
  EXPECT_EQ(error["verdict"], "error");
  EXPECT_EQ(error["error"], "cannot start the target");
  EXPECT_EQ(error["state"], nullptr);
  EXPECT_EQ(keys_of(error), keys_of(holds));
  EXPECT_EQ(keys_of(report_json(violated, names)), keys_of(holds));
  EXPECT_EQ(keys_of(report_json(interrupted, names)), keys_of(holds));
}

// A complete search of every message read, with a property and nothing
// uncontrolled: one line, no caveat, not qualified.
TEST(VerdictLines, APlainHoldsHasNoCaveat) {
  const VerdictLines lines =
      verdict_lines(kv_holds(), kv_names(executor::StateKind::kRegions));
  EXPECT_EQ(lines.first,
            std::vector<std::string>{
                "holds: 4 distinct states, 5 dedup merges, 8 transitions; "
                "every reachable state explored (depth 2)"});
  EXPECT_TRUE(lines.caveats.empty());
  EXPECT_FALSE(lines.qualified);
}

// What the text says right after the verdict, the JSON carries: the same
// lines in the same order.
TEST(VerdictLines, TheTextAndTheJsonSayTheSameCaveats) {
  StepNames names = kv_names(executor::StateKind::kRegions);
  names.no_property = true;
  names.max_states = 4;
  search::Report report = kv_holds();
  report.complete = false;
  report.coverage[1] = {4, 1, "read"};
  report.masked = {"stamp+0"};
  report.restarts = 1;
  report.sources.note(executor::Source::kRdtscUncontrolled,
                      executor::Via::kOther);
  const VerdictLines lines = verdict_lines(report, names);
  EXPECT_TRUE(lines.qualified);
  ASSERT_EQ(lines.caveats.size(), 5U);
  EXPECT_EQ(lines.caveats[0], "no invariant and no property: checked "
                              "crashes, exits and hangs only");
  EXPECT_EQ(lines.caveats[1], "--max-states 4: states beyond the first 4 "
                              "were neither kept nor explored");
  EXPECT_EQ(lines.caveats[2], "message 2 was read whole in only 1 of 4 "
                              "transitions: the target waited in read");
  EXPECT_TRUE(lines.caveats[3].starts_with("masked volatile bytes: stamp+0"));
  EXPECT_TRUE(lines.caveats[4].starts_with("NOT CONTROLLED: rdtsc"))
      << lines.caveats[4];
  std::string expected = "holds up to depth 2: 4 distinct states, 5 dedup "
                         "merges, 8 transitions (search cut by a bound, not "
                         "complete)\n";
  for (const std::string &caveat : lines.caveats)
    expected += caveat + "\n";
  EXPECT_TRUE(printed(report, names).starts_with(expected))
      << printed(report, names);
  const nlohmann::json json = report_json(report, names);
  EXPECT_EQ(json["verdict_lines"], lines.first);
  EXPECT_EQ(json["caveats"], lines.caveats);
  EXPECT_EQ(json["qualified"], true);
}

// A message never read qualifies a holds in its first line; a lossy
// abstraction is the first line; neither is a caveat of its own then.
TEST(VerdictLines, FirstLinesQualifyAHoldsToo) {
  const StepNames names = kv_names(executor::StateKind::kRegions);
  search::Report unread = kv_holds();
  unread.coverage[1] = {4, 0, "clock_nanosleep"};
  const VerdictLines lines = verdict_lines(unread, names);
  EXPECT_TRUE(lines.qualified);
  EXPECT_TRUE(lines.caveats.empty());
  EXPECT_EQ(lines.first.at(0),
            "holds, but message 2 was never read: the target waited in "
            "clock_nanosleep: 4 distinct states, 5 dedup merges, 8 "
            "transitions; every reachable state explored (depth 2)");
  const VerdictLines lossy = verdict_lines(lossy_report(), names);
  EXPECT_TRUE(lossy.qualified);
  EXPECT_EQ(lossy.first.at(0), kLossyLine);
  EXPECT_TRUE(lossy.caveats.empty());
  search::Report violated = lossy_report();
  violated.verdict = search::Verdict::kViolated;
  violated.violation = "sticky: byte 1 of cmc_state went 01 -> 00";
  const VerdictLines broken = verdict_lines(violated, names);
  EXPECT_FALSE(broken.qualified);
  EXPECT_EQ(broken.first,
            std::vector<std::string>{"violated: " + violated.violation});
  ASSERT_EQ(broken.caveats.size(), 1U);
  EXPECT_TRUE(broken.caveats[0].starts_with("region abstraction: 2 of 5"));
}

} // namespace
} // namespace cmc::app
