// Bad input and misbehaving targets: one clear line, the right exit
// status, and no process left behind.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class BadInput : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> check(std::vector<std::string> command,
                               std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",    "-q",       "-m",        "SET a\\n",    "-m",
      "SET b\\n", "--region", "cmc_state", "--invariant", "sticky"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.emplace_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

std::vector<std::string> misbehave(const std::string &mode) {
  return {target("misbehave"), mode, "7000"};
}

// The single line cmc printed on stderr.
void expect_one_line(const Outcome &run, int status, const std::string &part) {
  EXPECT_EQ(run.status, status) << run.err;
  EXPECT_NE(run.err.find(part), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_TRUE(run.err.starts_with("cmc: ")) << run.err;
}

// The file is opened before the search: a bad path fails at once.
TEST_F(BadInput, JsonFileInAMissingDirectoryIsAUsageError) {
  expect_one_line(
      run_cmc(check({demo("kv"), "7000"}, {"--json", "/nonexistent/r.json"})),
      2, "cannot write --json /nonexistent/r.json: No such file");
}

TEST_F(BadInput, MissingProgram) {
  expect_one_line(run_cmc(check({"/nonexistent/kv", "7000"})), 3,
                  "does not exist");
}

TEST_F(BadInput, ProgramNotInPath) {
  expect_one_line(run_cmc(check({"no-such-cmc-target", "7000"})), 3,
                  "is not in PATH");
}

TEST_F(BadInput, NotAnElfFile) {
  const std::string script = ::testing::TempDir() + "/script.sh";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  chmod(script.c_str(), 0755);
  expect_one_line(run_cmc(check({script})), 3, "is not an ELF file");
}

TEST_F(BadInput, UnknownSymbol) {
  expect_one_line(run_cmc({"check", "-q", "-m", "SET a\\n", "--region",
                           "no_such_global", "--", demo("kv"), "7000"}),
                  3, "symbol 'no_such_global' is not in");
}

TEST_F(BadInput, RegionOutsideAnyMapping) {
  expect_one_line(run_cmc({"check", "-q", "-m", "SET a\\n", "--region",
                           "store+0x10000000:2", "--", demo("kv"), "7000"}),
                  3, "is not in a readable mapping");
}

TEST_F(BadInput, UsageErrorsExitTwo) {
  EXPECT_EQ(
      run_cmc({"check", "--region", "cmc_state", "--", demo("kv")}).status, 2);
  EXPECT_EQ(run_cmc({"check", "-m", "x", "--region", "cmc_state", "--invariant",
                     "nonsense", "--", demo("kv")})
                .status,
            2);
  expect_one_line(run_cmc({"check", "-m", "SET \\q", "--region", "cmc_state",
                           "--", demo("kv"), "7000"}),
                  2, "unknown escape");
  expect_one_line(run_cmc({"check", "-m", "x", "--region", "cmc_state:0", "--",
                           demo("kv"), "7000"}),
                  2, "bad --region");
  EXPECT_EQ(run_cmc({"bogus"}).status, 2);
}

TEST_F(BadInput, HelpExplainsAndExitsZero) {
  const Outcome run = run_cmc({"check", "--help"});
  EXPECT_EQ(run.status, 0);
  EXPECT_NE(run.out.find("--region"), std::string::npos);
  EXPECT_NE(run.out.find("Exit status"), std::string::npos);
}

TEST_F(BadInput, TargetExitsAtStart) {
  // Its output is captured: the line says what it last wrote.
  expect_one_line(run_cmc(check(misbehave("exit"))), 3,
                  "exited with status 1 before it waited for a client; it "
                  "last wrote \"misbehave: exiting at start\"");
}

// Every run starts in an empty directory of its own, removed afterwards:
// mode cwd exits at start if an earlier run's file is in its directory.
TEST_F(BadInput, EveryRunHasAPrivateWorkingDirectory) {
  const std::string tmp =
      ::testing::TempDir() + "/cmc-workdirs-" + std::to_string(getpid());
  std::filesystem::create_directories(tmp);
  setenv("TMPDIR", tmp.c_str(), 1);
  const Outcome run = run_cmc(check(misbehave("cwd")));
  unsetenv("TMPDIR");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_FALSE(std::filesystem::exists("left-by-an-earlier-run"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "a run's directory is left";
  std::filesystem::remove_all(tmp);
}

// cmc may itself run under a service manager: its socket-activation and
// notification variables are not the target's.
TEST_F(BadInput, TheTargetDoesNotInheritServiceManagerVariables) {
  setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
  setenv("LISTEN_FDS", "1", 1);
  const Outcome run = run_cmc(check(misbehave("env")));
  unsetenv("NOTIFY_SOCKET");
  unsetenv("LISTEN_FDS");
  EXPECT_EQ(run.status, 0) << run.err;
}

TEST_F(BadInput, TargetCrashesAtStart) {
  expect_one_line(run_cmc(check(misbehave("segv"))), 3,
                  "killed by SIGSEGV before it waited for a client");
}

TEST_F(BadInput, TargetNeverListens) {
  expect_one_line(run_cmc(check(misbehave("pipe"))), 3,
                  "has not called listen()");
}

TEST_F(BadInput, TargetHangsAtStart) {
  expect_one_line(run_cmc(check(misbehave("hang"), {"--step-timeout", "0.5"})),
                  3, "hung");
}

TEST_F(BadInput, TargetFloodsOutput) {
  expect_one_line(run_cmc(check(misbehave("flood"), {"--step-timeout", "0.5"})),
                  3, "hung");
}

TEST_F(BadInput, TargetForks) {
  expect_one_line(run_cmc(check(misbehave("fork"))), 3,
                  "the target started a process");
}

TEST_F(BadInput, StateThatDiffersBetweenRunsStopsTheCheck) {
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "--region", "volatile_pid",
               "--", target("misbehave"), "pid", "7000"});
  expect_one_line(run, 3, "nondeterminism");
  EXPECT_NE(run.err.find("volatile_pid+0"), std::string::npos) << run.err;
}

class Faults : public BadInput {};

TEST_F(Faults, CrashDuringAMessageIsAViolation) {
  const Outcome run = run_cmc({"check", "-q", "--json", "-", "-m", "SET a\\n",
                               "-m", "CRASH\\n", "--region", "cmc_state", "--",
                               target("misbehave"), "serve", "7000"});
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send":"CRASH\n"}])"));
  // With the last line the target wrote before it died.
  EXPECT_EQ(json["violation"], "target killed by SIGSEGV during step 1; it "
                               "last wrote \"misbehave: crashing on purpose\"");
  // Where: raise() called from misbehave's main, on the way down.
  const auto &frames = json["backtrace"];
  ASSERT_TRUE(frames.is_array()) << run.out;
  const auto in_main = std::ranges::find_if(frames, [](const auto &frame) {
    return frame.template get<std::string>().starts_with("main+");
  });
  ASSERT_NE(in_main, frames.end()) << frames.dump();
  EXPECT_NE(in_main->template get<std::string>().find("(misbehave.c:"),
            std::string::npos);
  EXPECT_NE(run.err.find("  at #0 "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("main+"), std::string::npos) << run.err;
}

TEST_F(Faults, ExitDuringAMessageIsAViolation) {
  const Outcome run = run_cmc({"check", "-q", "--json", "-", "-m", "SET a\\n",
                               "-m", "QUIT\\n", "--region", "cmc_state", "--",
                               target("misbehave"), "serve", "7000"});
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_NE(
      run.json()["violation"].get<std::string>().find("exited with status 0"),
      std::string::npos);
}

TEST_F(Faults, HangDuringAMessageIsAViolation) {
  const Outcome run =
      run_cmc({"check", "-q", "--json", "-", "--step-timeout", "0.5", "-m",
               "SET a\\n", "-m", "SPIN\\n", "--region", "cmc_state", "--",
               target("misbehave"), "serve", "7000"});
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.json()["counterexample"],
            nlohmann::json::parse(R"([{"send":"SPIN\n"}])"));
  EXPECT_NE(run.json()["violation"].get<std::string>().find("hung"),
            std::string::npos);
}

// User CPU time of pid in clock ticks, from /proc/PID/stat.
long user_ticks(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  for (int i = 3; i < 14 && fields >> field; ++i) {
  }
  long ticks = 0;
  fields >> ticks;
  return ticks;
}

// Waits, by polling /proc, until a target of the running cmc has spent
// 50 ms of CPU time: only the one spinning on SPIN does.
bool wait_for_spinning_target(pid_t cmc) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    for (const pid_t child : children_of(cmc))
      if (user_ticks(child) * 1000 / sysconf(_SC_CLK_TCK) >= 50)
        return true;
    std::this_thread::yield();
  }
  return false;
}

TEST_F(Faults, InterruptKillsEveryTargetAndReportsPartialCounts) {
  // SPIN never returns to waiting for input; the step timeout is long, so
  // only the interrupt ends the run. Two workers run targets at once.
  const Started started =
      start_cmc({"check", "-q", "-j", "2", "--json", "-", "--step-timeout",
                 "100", "-m", "SET a\\n", "-m", "SPIN\\n", "--region",
                 "cmc_state", "--", target("misbehave"), "serve", "7000"});
  ASSERT_TRUE(wait_for_spinning_target(started.pid));
  kill(started.pid, SIGINT);
  const Outcome run = finish(started);
  EXPECT_EQ(run.status, 3) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "error");
  EXPECT_EQ(json["error"], "interrupted");
  EXPECT_EQ(json["complete"], false);
  // Merged in canonical order: SET a from the initial state counts, the
  // SPIN transition that was in flight does not.
  EXPECT_EQ(json["distinct_states"], 2) << run.out;
  EXPECT_EQ(json["transitions"], 1) << run.out;
  EXPECT_NE(run.err.find("interrupted: "), std::string::npos) << run.err;
}

// An interrupt during a step of replay or explore ends the command, not the
// target's run: one line, exit 3, the target and its directory gone.
class Interrupt : public Faults {
protected:
  void SetUp() override {
    workdirs_ =
        ::testing::TempDir() + "/cmc-interrupt-" + std::to_string(getpid());
    std::filesystem::create_directories(workdirs_);
    setenv("TMPDIR", workdirs_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TMPDIR");
    EXPECT_TRUE(std::filesystem::is_empty(workdirs_))
        << "the target's working directory is left";
    std::filesystem::remove_all(workdirs_);
    Faults::TearDown();
  }
  // Starts cmc on a step that spins (SPIN, with a step timeout far away),
  // sends signal once the target spins, and expects "interrupted".
  void expect_interrupted(const Started &started, int signal) {
    ASSERT_TRUE(wait_for_spinning_target(started.pid));
    kill(started.pid, signal);
    const Outcome run = finish(started);
    EXPECT_EQ(run.status, 3) << run.out << run.err;
    EXPECT_EQ(run.err, "cmc: interrupted\n") << run.out;
    EXPECT_EQ(run.out.find("SIGKILL"), std::string::npos) << run.out;
  }
  std::string workdirs_;
};

TEST_F(Interrupt, CtrlCDuringAReplayStep) {
  expect_interrupted(start_cmc({"replay", "--step-timeout", "100", "--region",
                                "cmc_state", "--steps", "SET a\n", "SPIN\n",
                                "--", target("misbehave"), "serve", "7000"}),
                     SIGINT);
}

TEST_F(Interrupt, SigtermDuringAReplayStep) {
  expect_interrupted(start_cmc({"replay", "--step-timeout", "100", "--region",
                                "cmc_state", "--steps", "SPIN\n", "--",
                                target("misbehave"), "serve", "7000"}),
                     SIGTERM);
}

TEST_F(Interrupt, CtrlCDuringAnExploreStep) {
  const std::string commands =
      workdirs_ + "/../cmc-interrupt-commands-" + std::to_string(getpid());
  std::ofstream(commands) << "send 1\nstate\n";
  expect_interrupted(
      start_cmc({"explore", "--step-timeout", "100", "-m", "SPIN\n", "--region",
                 "cmc_state", "--", target("misbehave"), "serve", "7000"},
                commands),
      SIGINT);
  std::filesystem::remove(commands);
}

} // namespace
} // namespace cmc::testing
