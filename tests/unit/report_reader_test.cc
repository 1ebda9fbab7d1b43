#include "app/report/report_reader.h"

#include <gtest/gtest.h>

namespace cmc::app {
namespace {

using nlohmann::json;

// A report as cmc check --json writes one, with two clients and a tick.
json good_report() {
  return json::parse(R"({
    "format_version": 1, "cmc_version": "0.25.0",
    "verdict": "violated",
    "counterexample": [
      {"client": "A", "send": "LOCK\n"},
      {"tick": "10s"},
      {"client": "B", "send": {"hex": "48ff0a"}, "read": 2},
      {"client": "A", "disconnect": true, "closed_by_server": ["A"]}],
    "violation": {"hex": "6fff"},
    "replay": {"command": ["./lock", {"hex": "ff"}], "program_hash": "ab12",
      "clients": ["A", "B"], "regions": ["cmc_state+1:2"],
      "invariant": "exclusive", "forbid_response": "ERR",
      "properties": [], "seed": 18446744073709551615, "port": 65535,
      "aslr": true, "writable": ["journal"]}})");
}

// The error of parse_report on report, "" when it parses.
std::string error_of(const json &report) {
  const auto plan = parse_report(report.dump());
  return plan ? "" : plan.error().message;
}

// good_report() with the value at pointer replaced.
std::string error_with(const char *pointer, const json &value) {
  json report = good_report();
  report[json::json_pointer(pointer)] = value;
  return error_of(report);
}

TEST(ReportReader, ReadsEveryField) {
  const auto plan = parse_report(good_report().dump());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->steps.size(), 4U);
  EXPECT_EQ(plan->steps[0].client, "A");
  EXPECT_EQ(plan->steps[0].message, "LOCK\n");
  EXPECT_EQ(plan->steps[1].kind, Step::Kind::kTick);
  EXPECT_EQ(plan->steps[2].message, "H\xff\n");
  EXPECT_EQ(plan->steps[3].kind, Step::Kind::kDisconnect);
  EXPECT_EQ(plan->expected, "o\xff");
  const TargetOptions &target = plan->target;
  EXPECT_EQ(target.command, (std::vector<std::string>{"./lock", "\xff"}));
  EXPECT_EQ(target.clients, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(target.regions, (std::vector<std::string>{"cmc_state+1:2"}));
  EXPECT_EQ(target.invariant, "exclusive");
  EXPECT_EQ(target.forbid_response, "ERR");
  EXPECT_EQ(target.seed, UINT64_MAX);
  EXPECT_EQ(target.port, 65535);
  EXPECT_TRUE(target.aslr);
  EXPECT_EQ(target.writable, (std::vector<std::string>{"journal"}));
  EXPECT_EQ(target.tick, "10s");
  EXPECT_EQ(plan->program_hash, "ab12");
}

TEST(ReportReader, AbsentAndNullFieldsAreDefaults) {
  const auto plan =
      parse_report(R"({"counterexample": [{"send": "x"}], "violation": null})");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->expected, "");
  EXPECT_EQ(plan->target.invariant, "none");
  EXPECT_FALSE(plan->target.port);
}

TEST(ReportReader, RefusesWhatIsNotAReport) {
  EXPECT_EQ(parse_report("").error().message.substr(0, 9), "not JSON:");
  EXPECT_EQ(parse_report("{\"a\": ").error().message.substr(0, 9), "not JSON:");
  EXPECT_EQ(parse_report("[1]").error().message,
            "not a cmc check --json report (not a JSON object)");
  EXPECT_EQ(parse_report("1e999").error().message.substr(0, 9), "not JSON:");
  EXPECT_EQ(parse_report("{\"s\": \"\xff\"}").error().message.substr(0, 9),
            "not JSON:");
  EXPECT_EQ(error_of(json::parse(R"({"verdict": "holds",
                                     "counterexample": null})")),
            "counterexample: none to replay (the check found no violation)");
  EXPECT_EQ(error_with("/counterexample", "x"),
            "counterexample: expected an array of steps");
}

TEST(ReportReader, NamesTheBadStepField) {
  EXPECT_EQ(error_with("/counterexample/1", 3).substr(0, 35),
            "counterexample[1]: expected an obje");
  EXPECT_EQ(error_with("/counterexample/0/send", 5),
            "counterexample[0].send: expected a string or {\"hex\": "
            "\"...\"}, two hex digits per byte");
  EXPECT_EQ(error_with("/counterexample/2/send/hex", "4"),
            "counterexample[2].send: expected a string or {\"hex\": "
            "\"...\"}, two hex digits per byte");
  EXPECT_EQ(error_with("/counterexample/0/tick", "10s"),
            "counterexample[0]: expected exactly one of send, disconnect, "
            "tick and crash");
  EXPECT_EQ(error_with("/counterexample/3/disconnect", false),
            "counterexample[3].disconnect: expected true");
  EXPECT_EQ(error_with("/counterexample/1/tick", 10),
            "counterexample[1].tick: expected a duration string ('10s')");
  EXPECT_EQ(error_with("/counterexample/0/client", json::array()),
            "counterexample[0].client: expected a string or {\"hex\": "
            "\"...\"}, two hex digits per byte");
}

// A crash step (--crash) is no client's, and the check's --crash comes
// back with the report.
TEST(ReportReader, ReadsACrashStep) {
  json report = good_report();
  report["counterexample"].push_back({{"crash", true}});
  report["replay"]["crash"] = true;
  const auto plan = parse_report(report.dump());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->steps.back().kind, Step::Kind::kCrash);
  EXPECT_TRUE(plan->target.crash);
  report["counterexample"].back()["client"] = "A";
  EXPECT_EQ(error_of(report),
            "counterexample[4].client: a crash is no client's step");
  EXPECT_EQ(error_with("/counterexample/3", json::parse(R"({"crash": false})")),
            "counterexample[3].crash: expected true");
}

// {"tick": ""} aborted the replay (a tick step without a tick).
TEST(ReportReader, ATickIsADuration) {
  const std::string empty = error_with("/counterexample/1/tick", "");
  EXPECT_TRUE(empty.starts_with("counterexample[1].tick: '' is not a "
                                "duration"))
      << empty;
  json report = good_report();
  report["counterexample"].push_back({{"tick", "10000ms"}});
  EXPECT_EQ(error_of(report), "");
  report["counterexample"].push_back({{"tick", "5s"}});
  EXPECT_EQ(error_of(report), "counterexample[5].tick: '5s' is not the tick "
                              "of the steps before it ('10s')");
}

// An unknown client was invented, so the replay ran another target.
TEST(ReportReader, EveryStepIsByAClientOfTheCheck) {
  EXPECT_EQ(error_with("/counterexample/0/client", "C"),
            "counterexample[0].client: 'C' is not one of the check's "
            "clients (A, B)");
  json report = good_report();
  report["counterexample"][0].erase("client");
  EXPECT_EQ(error_of(report), "counterexample[0].client: missing: the check "
                              "had clients (A, B)");
  EXPECT_EQ(error_with("/counterexample/1/client", "A"),
            "counterexample[1].client: a tick is no client's step");
  report = json::parse(R"({"counterexample": [{"client": "A", "send": "x"}]})");
  EXPECT_EQ(error_of(report), "counterexample[0].client: 'A' is not a client "
                              "of the check (it had none: replay.clients is "
                              "empty)");
  report = json::parse(R"({"counterexample": [{"disconnect": true}]})");
  EXPECT_EQ(error_of(report), "counterexample[0].disconnect: needs a client, "
                              "and the check had none (replay.clients is "
                              "empty)");
  EXPECT_EQ(error_with("/replay/clients", {"A", "A"}),
            "replay.clients: --client A is given twice: each client needs a "
            "name of its own");
}

// Port -1 became 65535 and 70000 became 4464.
TEST(ReportReader, NumbersAreInRange) {
  for (const json &port :
       {json(-1), json(0), json(70000), json("80"), json(80.5), json(true)})
    EXPECT_EQ(error_with("/replay/port", port),
              "replay.port: expected a whole number from 1 to 65535")
        << port;
  EXPECT_EQ(error_with("/replay/port", nullptr), "");
  for (const json &seed : {json(-1), json(1.5), json("7")})
    EXPECT_EQ(error_with("/replay/seed", seed),
              "replay.seed: expected a whole number from 0 to "
              "18446744073709551615")
        << seed;
}

TEST(ReportReader, ReadsNoFormatNewerThanItsOwn) {
  EXPECT_EQ(error_with("/format_version", 2),
            "format_version: 2: this cmc reads reports of format 1");
  json older = good_report();
  older.erase("format_version");
  EXPECT_EQ(error_of(older), "");
}

TEST(ReportReader, NamesTheBadTargetField) {
  EXPECT_EQ(error_with("/replay", "x"), "replay: expected an object");
  EXPECT_EQ(error_with("/replay/command", "./kv"),
            "replay.command: expected an array of strings");
  EXPECT_EQ(error_with("/replay/command/1", 7000),
            "replay.command[1]: expected a string or {\"hex\": \"...\"}, "
            "two hex digits per byte");
  EXPECT_EQ(error_with("/replay/aslr", "yes"),
            "replay.aslr: expected true or false");
  EXPECT_EQ(error_with("/replay/invariant", "always"),
            "replay.invariant: 'always' is not sticky, exclusive or none");
  EXPECT_EQ(error_with("/replay/program_hash", 12),
            "replay.program_hash: expected a string or {\"hex\": \"...\"}, "
            "two hex digits per byte");
  const std::string region =
      error_with("/replay/regions/0", "cmc_state+18446744073709551615:2");
  EXPECT_TRUE(region.starts_with("replay.regions[0]: bad --region")) << region;
  EXPECT_EQ(error_with("/violation", 3),
            "violation: expected a string or {\"hex\": \"...\"}, two hex "
            "digits per byte");
}

} // namespace
} // namespace cmc::app
