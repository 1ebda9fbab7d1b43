// cmc check on tsc_lease, whose bug needs rdtsc: its counter must be the
// virtual clock, whether PR_SET_TSC traps on this machine or cmc patches
// each rdtsc site with int3 (forced here by CMC_RDTSC=patch).

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "tests/integration/run_cmc.h"
#include "tracer/time/tsc_patches.h"

namespace cmc::testing {
namespace {

Outcome check_lease(std::vector<std::string> extra,
                    const std::string &library = "") {
  std::vector<std::string> args{
      "check",     "-m",          "TAKE\\n", "-m",     "RENEW\\n", "--region",
      "cmc_state", "--invariant", "sticky",  "--json", "-",        "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("tsc_lease"), "7000"});
  if (!library.empty())
    args.push_back(target(library));
  return run_cmc(args);
}

// The control the report names for rdtsc, or "" when it names none.
std::string rdtsc_control(const nlohmann::json &report) {
  for (const auto &entry : report["sources"])
    if (entry["source"] == "rdtsc")
      return entry["control"];
  return "";
}

const nlohmann::json kCounterexample = nlohmann::json::parse(
    R"([{"send":"TAKE\n"},{"tick":"10s"},{"send":"RENEW\n"}])");

class Rdtsc : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }

  // The lease expires after a tick of 10 s and at no other time, at -j1
  // and -j2 alike; the report names rdtsc with a control starting so.
  static void expect_virtual_counter(const std::string &control,
                                     const std::string &library = "") {
    const Outcome held = check_lease({"-j", "1"}, library);
    ASSERT_EQ(held.status, 0) << held.err << held.out;
    EXPECT_EQ(held.json()["verdict"], "holds");
    EXPECT_TRUE(rdtsc_control(held.json()).starts_with(control))
        << held.json()["sources"];
    for (const char *jobs : {"1", "2"}) {
      const Outcome run = check_lease({"--tick", "10s", "-j", jobs}, library);
      ASSERT_EQ(run.status, 1) << "-j" << jobs << ": " << run.err << run.out;
      const auto json = run.json();
      EXPECT_EQ(json["counterexample"], kCounterexample) << "-j" << jobs;
      EXPECT_EQ(json["violation"], "sticky: byte 0 of cmc_state went 01 -> 00");
      EXPECT_TRUE(rdtsc_control(json).starts_with(control)) << json["sources"];
      EXPECT_TRUE(json["uncontrolled"].dump().find("rdtsc") ==
                  std::string::npos)
          << json["uncontrolled"];
    }
  }
};

TEST_F(Rdtsc, WhereItTrapsTheCounterIsTheVirtualClock) {
  if (!tracer::tsc_traps())
    GTEST_SKIP() << "rdtsc runs on this CPU after PR_SET_TSC (its hypervisor "
                    "ignores CR4.TSD): cmc patches the sites instead";
  expect_virtual_counter("trapped (PR_SET_TSC)");
  // ld.so and the constructors run before the entry sets PR_SET_TSC: their
  // sites are patched until then, and the report says so, never that
  // PR_SET_TSC does not trap.
  const nlohmann::json report = check_lease({"--tick", "10s"}).json();
  std::vector<std::string> controls;
  for (const auto &entry : report["sources"])
    if (entry["source"] == "rdtsc")
      controls.push_back(entry["control"]);
  ASSERT_EQ(controls.size(), 2U) << report["sources"];
  EXPECT_EQ(controls[0], "trapped (PR_SET_TSC), virtual clock");
  EXPECT_TRUE(controls[1].starts_with("patched ") &&
              controls[1].find("before the program's entry") !=
                  std::string::npos)
      << controls[1];
}

TEST_F(Rdtsc, PatchedSitesAnswerFromTheVirtualClock) {
  const ForcedPatches patches;
  // tsc_lease's rdtsc and rdtscp, libc's two and ld.so's.
  expect_virtual_counter("patched ");
  const Outcome run = check_lease({"--tick", "10s"});
  const std::string control = rdtsc_control(run.json());
  const int sites = std::atoi(control.c_str() + std::string("patched ").size());
  EXPECT_GE(sites, 4) << control;
}

TEST_F(Rdtsc, SitesOfALibraryLoadedByDlopenArePatchedToo) {
  const ForcedPatches patches;
  expect_virtual_counter("patched ", "libtsc_clock.so");
}

TEST_F(Rdtsc, ScanListsTheRdtscSitesObjdumpFinds) {
  const Outcome run = run_cmc({"scan", "--json", "-", target("tsc_lease")});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  ASSERT_TRUE(json.is_object() && json["modules"].size() >= 3) << run.out;
  const auto &modules = json["modules"];
  for (const auto &module : modules)
    EXPECT_EQ(static_cast<int>(module["tsc_sites"].size()),
              objdump_count(module["module"], "rdtscp?"))
        << module["module"];
  std::vector<std::string> instructions;
  for (const auto &site : modules[0]["tsc_sites"])
    instructions.push_back(site["instruction"]);
  EXPECT_EQ(instructions, (std::vector<std::string>{"rdtsc", "rdtscp"}));
  const Outcome text = run_cmc({"scan", target("tsc_lease")});
  EXPECT_NE(text.out.find("2 rdtsc"), std::string::npos) << text.out;
}

} // namespace
} // namespace cmc::testing
