// A command that runs a wrapper (env, setpriv, sh -c 'exec ...') checks as
// the server the wrapper execs: tests/integration/targets/exec_wrapper
// reads the clock, the time stamp counter and random bytes, then execs its
// arguments in its place (after itself, with --again). The regions are the
// served program's symbols; its load bias, rdtsc sites and vDSO are its
// new image's; snapshots, replay and scan --run follow it too.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/run_cmc.h"
#include "tracer/time/tsc_patches.h"

namespace cmc::testing {
namespace {

class Wrapper : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

// path as /proc/PID/exe names it (demo() has a "..").
std::string real(const std::string &path) {
  return std::filesystem::canonical(path).string();
}

// command run by exec_wrapper, which execs itself again times first.
std::vector<std::string> wrapped(const std::vector<std::string> &command,
                                 int again = 0) {
  std::vector<std::string> line{target("exec_wrapper")};
  if (again > 0)
    line.insert(line.end(), {"--again", std::to_string(again)});
  line.insert(line.end(), command.begin(), command.end());
  return line;
}

// check of the demo kv's two cells with sticky, with extra options.
std::vector<std::string> kv_check(const std::vector<std::string> &command,
                                  const std::vector<std::string> &extra) {
  std::vector<std::string> args{
      "check",    "-q",       "-m",        "SET a\\n",    "-m",
      "SET b\\n", "--region", "cmc_state", "--invariant", "sticky"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.emplace_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

// The seed's reference result, directly and through one wrapper or three
// (the wrapper twice more, then kv), replaying every path and branching
// from snapshots.
TEST_F(Wrapper, KvChecksAsItDoesDirectly) {
  const std::vector<std::string> kv{demo("kv"), "7000"};
  for (const char *mode : {"replay", "snapshot"})
    for (const auto &command : {kv, wrapped(kv), wrapped(kv, 2)}) {
      const Outcome run =
          run_cmc(kv_check(command, {"--mode", mode, "--json", "-"}));
      ASSERT_EQ(run.status, 0) << mode << " " << command[0] << ": " << run.err;
      const auto json = run.json();
      EXPECT_EQ(json["verdict"], "holds");
      EXPECT_EQ(json["distinct_states"], 4) << mode << " " << command[0];
      EXPECT_EQ(json["dedup_merges"], 5) << mode << " " << command[0];
      EXPECT_EQ(json["transitions"], 8) << mode << " " << command[0];
    }
}

// A script that ends in exec is a wrapper too: the kernel runs its
// interpreter, which execs kv.
TEST_F(Wrapper, AScriptThatExecsKvChecksAsKv) {
  const std::filesystem::path script =
      std::filesystem::temp_directory_path() /
      ("cmc-wrapper-" + std::to_string(getpid()) + ".sh");
  std::ofstream(script) << "#!/bin/sh\nexec " << demo("kv") << " \"$@\"\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const Outcome run =
      run_cmc(kv_check({script.string(), "7000"}, {"--json", "-"}));
  std::filesystem::remove(script);
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
}

// kv_bug's shortest counterexample, found through the wrapper and
// replayed from the report; the banner names the program that served.
TEST_F(Wrapper, TheBugIsFoundAndReplayedThroughTheWrapper) {
  const std::filesystem::path report =
      std::filesystem::temp_directory_path() /
      ("cmc-wrapper-" + std::to_string(getpid()) + ".json");
  const auto command = wrapped({demo("kv_bug"), "7000"});
  auto args = kv_check(command, {"--json", report.string()});
  args.erase(args.begin() + 1); // the banner too
  const Outcome run = run_cmc(args);
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_TRUE(has(run.err, "breadth-first search of " + real(demo("kv_bug")) +
                               " (exec'd by " + target("exec_wrapper") + ")"))
      << run.err;
  EXPECT_TRUE(has(run.out, "1. send \"SET b\\n\"")) << run.out;
  EXPECT_TRUE(has(run.out, "2. send \"SET a\\n\"")) << run.out;
  const Outcome replay = run_cmc({"replay", "--from", report.string()});
  std::filesystem::remove(report);
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, "violated: sticky: byte 1 of cmc_state went "
                              "01 -> 00 (at step 2 of 2)"))
      << replay.out;
}

// The regions are the served program's: the wrapper's own globals are
// not in kv.
TEST_F(Wrapper, RegionsAreTheServedProgramsSymbols) {
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "--region", "wrapper_state",
               "--", target("exec_wrapper"), demo("kv"), "7000"});
  EXPECT_EQ(run.status, 3);
  EXPECT_TRUE(
      has(run.err, "symbol 'wrapper_state' is not in " + real(demo("kv"))))
      << run.err;
}

// tsc_lease's lease expires after a tick of 10 s and at no other time
// (tsc_test.cc), through the wrapper, which read the counter itself
// before its exec; with library, the counter is read in a library that
// tsc_lease loads with dlopen, which cmc patches when ld.so's
// _dl_debug_state runs: ld.so and libc lie where the wrapper's did, and
// their patches went with the wrapper's image.
void expect_virtual_counter(const std::string &library = "") {
  std::vector<std::string> command{target("tsc_lease"), "7000"};
  if (!library.empty())
    command.push_back(target(library));
  std::vector<std::string> args{
      "check",    "-q",       "-m",        "TAKE\\n",     "-m",
      "RENEW\\n", "--region", "cmc_state", "--invariant", "sticky",
      "--json",   "-",        "--tick",    "10s",         "--"};
  for (const auto &part : wrapped(command))
    args.push_back(part);
  const Outcome run = run_cmc(args);
  ASSERT_EQ(run.status, 1) << run.err << run.out;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(
                R"([{"send":"TAKE\n"},{"tick":"10s"},{"send":"RENEW\n"}])"));
  EXPECT_FALSE(has(json["uncontrolled"].dump(), "rdtsc"))
      << json["uncontrolled"];
}

// Where PR_SET_TSC traps, the wrapper set it at its entry and it stays
// set across the exec: tsc_lease's rdtsc fault from the start.
TEST_F(Wrapper, TrappedRdtscIsTheVirtualClockAfterTheExec) {
  if (!tracer::tsc_traps())
    GTEST_SKIP() << "rdtsc runs on this CPU after PR_SET_TSC (its hypervisor "
                    "ignores CR4.TSD): cmc patches the sites instead";
  expect_virtual_counter();
}

TEST_F(Wrapper, PatchedRdtscIsTheVirtualClockAfterTheExec) {
  const ForcedPatches patches;
  expect_virtual_counter();
  expect_virtual_counter("libtsc_clock.so");
}

// scan --run lists the sites of the program that served, and marks those
// its run reached.
TEST_F(Wrapper, ScanRunScansTheServedProgram) {
  std::vector<std::string> args{"scan", "--run",    "--json", "-",
                                "-m",   "SET a\\n", "--"};
  for (const auto &part : wrapped({demo("kv"), "7000"}))
    args.push_back(part);
  const Outcome run = run_cmc(args);
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  ASSERT_TRUE(json.is_object() && !json["modules"].empty()) << run.out;
  EXPECT_EQ(json["modules"][0]["module"], real(demo("kv")));
  EXPECT_GT(json["modules"][0]["observed_sites"].get<int>() +
                json["modules"][1]["observed_sites"].get<int>(),
            0)
      << json["modules"];
  EXPECT_EQ(json["run"]["messages_sent"], 1);
}

} // namespace
} // namespace cmc::testing
