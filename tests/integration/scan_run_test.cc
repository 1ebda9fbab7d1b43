// cmc scan --run: one traced run stopping on every system call, its sites
// laid over the static scan of the same files.

#include <gtest/gtest.h>

#include <string>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

Outcome scan_run(const std::vector<std::string> &messages,
                 const std::vector<std::string> &command) {
  std::vector<std::string> args{"scan", "--run", "--json", "-"};
  for (const std::string &message : messages)
    args.insert(args.end(), {"-m", message});
  args.emplace_back("--");
  args.insert(args.end(), command.begin(), command.end());
  Outcome run = run_cmc(args);
  EXPECT_TRUE(reap_leftovers().empty()) << "cmc left a target running";
  return run;
}

// The module whose path contains part.
nlohmann::json module_of(const nlohmann::json &json, const std::string &part) {
  for (const auto &module : json["modules"])
    if (module["module"].get<std::string>().find(part) != std::string::npos)
      return module;
  ADD_FAILURE() << "no module " << part << " in " << json.dump();
  return {};
}

// How often the site in function stopped, or -1 when there is none.
int observed_in(const nlohmann::json &module, const std::string &function) {
  for (const auto &site : module["sites"])
    if (site["function"] == function)
      return site["observed"].get<int>();
  return -1;
}

TEST(ScanRun, MarksTheInlineReadAndWriteOfAsmKvObserved) {
  const Outcome run = scan_run({"SET a\\n"}, {demo("asm_kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  const auto module = module_of(json, "asm_kv");
  // One read returned SET a; the next is the one it waits in.
  EXPECT_EQ(observed_in(module, "asm_read"), 2);
  EXPECT_EQ(observed_in(module, "asm_write"), 1);
  EXPECT_EQ(json["run"]["messages_sent"], 1);
  EXPECT_EQ(json["run"]["ended"],
            "waited for input after 1 of 1 messages (then killed)");
  EXPECT_TRUE(json["unscanned_sites"].empty()) << json["unscanned_sites"];
}

TEST(ScanRun, WithoutMessagesTheWriteIsNeverReached) {
  const Outcome run = scan_run({}, {demo("asm_kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto module = module_of(run.json(), "asm_kv");
  EXPECT_EQ(observed_in(module, "asm_write"), 0);
  const Outcome text = run_cmc({"scan", "--run", "--", demo("asm_kv"), "7000"});
  EXPECT_NE(text.out.find("asm_write syscall 1 (write) inline never reached"),
            std::string::npos)
      << text.out;
}

TEST(ScanRun, ListsTheVdsoFunctionsCalled) {
  const Outcome run = scan_run({"SET a\\n"}, {demo("clock_kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  ASSERT_EQ(json["vdso_calls"].size(), 1) << json["vdso_calls"];
  EXPECT_EQ(json["vdso_calls"][0]["function"], "__vdso_clock_gettime");
  EXPECT_GE(json["vdso_calls"][0]["calls"], 1);
  bool vdso_clock = false;
  for (const auto &source : json["sources"])
    vdso_clock |=
        source["source"] == "clock_gettime" && source["via"] == "vdso";
  EXPECT_TRUE(vdso_clock) << json["sources"];
}

// Every call a dynamic program makes is at a site the scan found: ld.so's
// start-up and libc's exit_group (231) included.
TEST(ScanRun, EveryObservedSiteOfAnExitingProgramIsAScannedSite) {
  const Outcome run = scan_run({}, {"/bin/true"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["run"]["ended"], "exited with status 0");
  EXPECT_TRUE(json["unscanned_sites"].empty()) << json["unscanned_sites"];
  EXPECT_GT(module_of(json, "ld-linux")["observed_sites"], 5);
  bool exit_group = false;
  std::size_t never = 0;
  const auto libc = module_of(json, "libc.so");
  for (const auto &site : libc["sites"]) {
    exit_group |= site["number"] == 231 && site["observed"] == 1;
    never += site["observed"] == 0 ? 1 : 0;
  }
  EXPECT_TRUE(exit_group);
  EXPECT_GT(never, 400U);
}

TEST(ScanRun, ACrashIsReportedWithTheSitesSeenBeforeIt) {
  const Outcome run = scan_run({}, {target("misbehave"), "segv", "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["run"]["ended"], "killed by SIGSEGV");
}

// After "--" every word is the program's, options of cmc's own names too.
TEST(ScanRun, TheProgramsOwnOptionsPassThrough) {
  const Outcome run = scan_run({"x"}, {"/bin/true", "--help", "-m"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["run"]["ended"], "exited with status 0");
}

TEST(ScanRun, ArgumentsOrMessagesWithoutRunAreAUsageError) {
  EXPECT_EQ(run_cmc({"scan", demo("kv"), "7000"}).status, 2);
  EXPECT_EQ(run_cmc({"scan", "-m", "x", demo("kv")}).status, 2);
}

TEST(ScanRun, AMissingProgramIsOneErrorLine) {
  const Outcome run = run_cmc({"scan", "--run", "--", "/nonexistent/server"});
  EXPECT_EQ(run.status, 3);
  EXPECT_EQ(run.err,
            "cmc: program /nonexistent/server does not exist or is not "
            "executable\n");
}

} // namespace
} // namespace cmc::testing
