// Bad input and misbehaving targets: one clear line, the right exit
// status, and no process left behind.

#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

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

// A file the kernel cannot execute is named (the release build says
// "execve failed: Exec format error"; a sanitizer build, whose target
// process is forked, only that it ended before exec). A script runs (it
// may exec the server, as a wrapper): one that exits before it serves
// says so.
TEST_F(BadInput, NotAnExecutable) {
  const std::string data = ::testing::TempDir() + "/data";
  std::ofstream(data) << "SET a\n";
  chmod(data.c_str(), 0755);
  expect_one_line(run_cmc(check({data})), 3, "cannot start " + data + ": ");
  const std::string script = ::testing::TempDir() + "/script.sh";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  chmod(script.c_str(), 0755);
  expect_one_line(run_cmc(check({script})), 3,
                  "exited with status 0 before it waited for a client");
}

TEST_F(BadInput, UnknownSymbol) {
  expect_one_line(run_cmc({"check", "-q", "-m", "SET a\\n", "--region",
                           "no_such_global", "--", demo("kv"), "7000"}),
                  3, "symbol 'no_such_global' is not in");
}

TEST_F(BadInput, RegionOutsideItsSegment) {
  expect_one_line(run_cmc({"check", "-q", "-m", "SET a\\n", "--region",
                           "store+0x10000000:2", "--", demo("kv"), "7000"}),
                  3, "does not fit in the loaded segment that holds 'store'");
}

// OFF+LEN wrapped around to the byte before the symbol ("holds"), or
// asked for a vector of 2^64 bytes ("internal error").
TEST_F(BadInput, RegionArithmeticIsChecked) {
  const auto with_region = [](const std::string &region) {
    return run_cmc({"check", "-q", "-m", "SET a\\n", "--region", region, "--",
                    demo("kv"), "7000"});
  };
  expect_one_line(with_region("cmc_state+18446744073709551615:2"), 2,
                  "OFF+LEN is past the end of the address space");
  expect_one_line(with_region("cmc_state+1:18446744073709551615"), 2,
                  "OFF+LEN is past the end of the address space");
  expect_one_line(with_region("cmc_state+1:18446744073709551614"), 3,
                  "does not fit in the loaded segment");
  expect_one_line(with_region("cmc_state:18446744073709551616"), 2,
                  "the length must be a positive number below 2^64");
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

// CLI11's own usage errors: the option, why, and a hint to --help.
void expect_usage(const Outcome &run, const std::string &part) {
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_NE(run.err.find(part), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

std::vector<std::string> kv_with(std::vector<std::string> options) {
  std::vector<std::string> args{"check",    "-q",       "-m",
                                "SET a\\n", "--region", "cmc_state"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", demo("kv"), "7000"});
  return args;
}

// 1e10 s overflowed the deadline: the target "hung" at once.
TEST_F(BadInput, StepTimeoutOutOfRange) {
  for (const char *timeout : {"1e10", "nan", "inf", "1e18", "-1", "0"})
    expect_one_line(run_cmc(kv_with({"--step-timeout", timeout})), 2,
                    "is not a timeout: give a number of seconds from 0.001 "
                    "to 86400");
}

TEST_F(BadInput, TicksPastAHundredYears) {
  expect_one_line(run_cmc(kv_with({"--tick", "876001h"})), 2,
                  "of at most 100 years");
  expect_one_line(
      run_cmc(kv_with({"--tick", "876000h", "--max-ticks", "2"})), 2,
      "--max-ticks 2 of --tick 876000h add up to more than 100 years");
}

// -1 and 2^64 were read as 2^64-1.
TEST_F(BadInput, SeedIsAWholeNumber) {
  for (const char *seed : {"-1", "18446744073709551616", "1.5", "0x10", ""})
    expect_usage(run_cmc(kv_with({"--seed", seed})),
                 "is not a whole number from 0 to 18446744073709551615");
}

TEST_F(BadInput, PortOutOfRange) {
  for (const char *port : {"0", "-1", "65536", "70000"})
    expect_usage(run_cmc(kv_with({"--port", port})), "--port");
}

TEST_F(BadInput, JobCounts) {
  expect_one_line(run_cmc(kv_with({"-j", "0"})), 2,
                  "-j 0: give at least 1 worker");
  expect_usage(run_cmc(kv_with({"-j", "-1"})), "is not a whole number");
  // More workers than the machine runs: capped, and said; the check runs.
  const Outcome many = run_cmc(kv_with({"-j", "3000"}));
  EXPECT_EQ(many.status, 0) << many.err;
  const std::string note = "cmc: -j 3000 is more workers than this machine "
                           "runs at once; using ";
  EXPECT_TRUE(many.err.starts_with(note)) << many.err;
  EXPECT_EQ(std::count(many.err.begin(), many.err.end(), '\n'), 1) << many.err;
}

// The counterexample of two clients of one name did not replay.
TEST_F(BadInput, ClientNames) {
  const auto clients = [](const std::vector<std::string> &names) {
    std::vector<std::string> args{"check", "-q"};
    for (const std::string &name : names)
      args.insert(args.end(), {"--client", name, "-m", "SET a\\n"});
    args.insert(args.end(), {"--", demo("kv"), "7000"});
    return run_cmc(args);
  };
  expect_one_line(clients({"A", "A"}), 2, "--client A is given twice");
  expect_one_line(clients({"A", ""}), 2, "a name is not empty and has no ':'");
  expect_one_line(clients({"A:B"}), 2, "a name is not empty and has no ':'");
}

TEST_F(BadInput, JsonToNowhereIsRefused) {
  expect_usage(run_cmc(kv_with({"--json", ""})),
               "an empty value: give a file, or - for stdout");
  // `--json= --region X`: CLI11 would give "--region" as the file.
  expect_usage(run_cmc(kv_with({"--json=", "--region", "cmc_state"})),
               "'--region' looks like an option: give a file, or - for "
               "stdout");
}

// cmc with its stdout on path (nullptr: closed); err gets its stderr.
Outcome run_with_stdout(const std::vector<std::string> &args,
                        const char *path) {
  const std::string err_path =
      ::testing::TempDir() + "/cmc-stderr-" + std::to_string(getpid());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (path != nullptr)
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, path, O_WRONLY,
                                     0);
  else
    posix_spawn_file_actions_addclose(&actions, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const CmcArgv argv(args);
  pid_t pid = -1;
  Outcome run;
  if (posix_spawn(&pid, argv.program(), &actions, nullptr, argv.get(),
                  environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }
  posix_spawn_file_actions_destroy(&actions);
  std::stringstream err;
  err << std::ifstream(err_path).rdbuf();
  run.err = err.str();
  std::filesystem::remove(err_path);
  return run;
}

// The report went nowhere, silently, with the verdict's exit status.
TEST_F(BadInput, JsonToAFullStdout) {
  const Outcome run = run_with_stdout(kv_with({"--json", "-"}), "/dev/full");
  EXPECT_EQ(run.status, 3) << run.err;
  const std::string error = "cmc: cannot write the JSON report to stdout: No "
                            "space left on device\n";
  // The text report (on stderr with --json -), then this one line.
  EXPECT_TRUE(run.err.ends_with("\n" + error)) << run.err;
  EXPECT_TRUE(run.err.starts_with("holds: ")) << run.err;
}

// Refused at once: a descriptor cmc opened later would be number 1.
TEST_F(BadInput, JsonToAClosedStdout) {
  const Outcome run = run_with_stdout(kv_with({"--json", "-"}), nullptr);
  expect_one_line(run, 2, "cannot write --json -: stdout is closed");
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
  EXPECT_TRUE(run_directories_on_host().empty()) << "a run's directory is left";
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

// A child process is followed (it waits in pause() for ever) and killed
// with the target.
TEST_F(BadInput, TargetForks) {
  const Outcome run = run_cmc(check(misbehave("fork")));
  EXPECT_EQ(run.status, 0) << run.err;
}

// A child that runs another program is not followed: one line naming it.
TEST_F(BadInput, TargetsChildExecs) {
  expect_one_line(run_cmc(check(misbehave("forkexec"))), 3,
                  "the target executed another program (/usr/bin/sleep)");
}

TEST_F(BadInput, StateThatDiffersBetweenRunsStopsTheCheck) {
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "--region", "volatile_pid",
               "--", target("misbehave"), "pid", "7000"});
  expect_one_line(run, 3, "nondeterminism");
  // The per-run value is random: any of its bytes can be the first that
  // differs (byte 0 is equal in both runs 1 time in 256).
  EXPECT_TRUE(
      std::regex_search(run.err, std::regex(R"(volatile_pid\+[0-3]\b)")))
      << run.err;
}

// replay --from a report that is not what check writes: one line naming
// the field, exit 3, before any target starts.
class BadReport : public BadInput {
protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/cmc-bad-report-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_ + "/work");
    setenv("TMPDIR", (dir_ + "/work").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TMPDIR");
    EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/work"))
        << "a run's working directory is left";
    EXPECT_TRUE(run_directories_on_host().empty())
        << "a run's directory is left";
    std::filesystem::remove_all(dir_);
    BadInput::TearDown();
  }
  // kv_bug's counterexample, as check writes it.
  static nlohmann::json report() {
    auto json = nlohmann::json::parse(R"({"verdict": "violated",
      "counterexample": [{"send": "SET b\n"}, {"send": "SET a\n"}],
      "violation": "sticky: byte 1 of cmc_state went 01 -> 00",
      "replay": {"regions": ["cmc_state"], "invariant": "sticky"}})");
    json["replay"]["command"] = {demo("kv_bug"), "7000"};
    return json;
  }
  // replay --from the report with the value at pointer replaced.
  Outcome replay_with(const char *pointer, const nlohmann::json &value) {
    auto json = report();
    json[nlohmann::json::json_pointer(pointer)] = value;
    std::ofstream(path()) << json.dump();
    return run_cmc({"replay", "--from", path()});
  }
  [[nodiscard]] std::string path() const { return dir_ + "/report.json"; }
  std::string dir_;
};

TEST_F(BadReport, TheGoodOneReproduces) {
  std::ofstream(path()) << report().dump();
  EXPECT_EQ(run_cmc({"replay", "--from", path()}).status, 1);
}

// "internal error: [json.exception.type_error...]"
TEST_F(BadReport, AFieldOfTheWrongType) {
  expect_one_line(replay_with("/counterexample/1/send", 5), 3,
                  path() + ": counterexample[1].send: expected a string or "
                           "{\"hex\": \"...\"}");
  expect_one_line(replay_with("/replay/regions", "cmc_state"), 3,
                  path() + ": replay.regions: expected an array of strings");
}

// SIGABRT in target_run.cc, and the working directory left behind.
TEST_F(BadReport, ATickThatIsNoDuration) {
  expect_one_line(replay_with("/counterexample/0", {{"tick", ""}}), 3,
                  path() + ": counterexample[0].tick: '' is not a duration");
}

// The client was invented: the replay ran a target the check never ran.
TEST_F(BadReport, AnUnknownClient) {
  auto json = report();
  json["replay"]["clients"] = {"A"};
  json["counterexample"] = {{{"client", "A"}, {"send", "SET b\n"}},
                            {{"client", "B"}, {"send", "SET a\n"}}};
  std::ofstream(path()) << json.dump();
  expect_one_line(run_cmc({"replay", "--from", path()}), 3,
                  "counterexample[1].client: 'B' is not one of the check's "
                  "clients (A)");
  // --client given overrides the report's, and must name its steps' too.
  json["counterexample"][1]["client"] = "A";
  std::ofstream(path()) << json.dump();
  expect_one_line(run_cmc({"replay", "--client", "C", "--from", path()}), 2,
                  "the report's step 1 is by client 'A', not by one of the "
                  "clients C");
}

// -1 became 65535, 70000 became 4464.
TEST_F(BadReport, APortOutOfRange) {
  for (const int port : {-1, 0, 70000})
    expect_one_line(replay_with("/replay/port", port), 3,
                    "replay.port: expected a whole number from 1 to 65535");
}

TEST_F(BadReport, ADirectoryOrNoJson) {
  expect_one_line(run_cmc({"replay", "--from", dir_}), 3,
                  "cannot read the report " + dir_ + ": Is a directory");
  std::ofstream(path()) << "{\"counterexample\": [";
  expect_one_line(run_cmc({"replay", "--from", path()}), 3,
                  path() + ": not JSON: parse error at line 1");
}

// A message and a program path that are not UTF-8 are written as
// {"hex": ...} and replay: they were written as U+FFFD (or lost the
// report), so the replay sent other bytes to another program.
TEST_F(BadReport, BytesThatAreNotUtf8RoundTrip) {
  const std::string program = dir_ + "/kv\xff";
  std::filesystem::create_symlink(demo("kv"), program);
  const Outcome check = run_cmc(
      {"check", "-q", "--json", path(), "-m", "SET a\\n", "-m", R"(\xff\xfe\n)",
       "--forbid-response", "ERR", "--", program, "7000"});
  ASSERT_EQ(check.status, 1) << check.err;
  const auto json = nlohmann::json::parse(std::ifstream(path()));
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": {"hex": "fffe0a"}}])"));
  EXPECT_EQ(json["coverage"][1]["send"], json["counterexample"][0]["send"]);
  const std::string name = json["replay"]["command"][0]["hex"];
  EXPECT_TRUE(name.ends_with("2f6b76ff")) << name; // "/kv\xff"
  const Outcome replay = run_cmc({"replay", "--from", path()});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("step 1: send \"\\xff\\xfe\\n\""),
            std::string::npos)
      << replay.out;
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

TEST_F(Faults, InterruptKillsEveryTargetAndReportsPartialCounts) {
  // SPIN never returns to waiting for input; the step timeout is long, so
  // only the interrupt ends the run. Two workers run targets at once.
  const Started started =
      start_cmc({"check", "-q", "-j", "2", "--json", "-", "--step-timeout",
                 "100", "-m", "SET a\\n", "-m", "SPIN\\n", "--region",
                 "cmc_state", "--", target("misbehave"), "serve", "7000"});
  ASSERT_NE(wait_for_spinning_child(started.pid), -1);
  kill(started.pid, SIGINT);
  const Outcome run = finish(started);
  EXPECT_EQ(run.status, 3) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "error");
  EXPECT_EQ(json["error"], "interrupted");
  EXPECT_EQ(json["complete"], false);
  // Merged in canonical order: the SPIN transition, in flight, does not
  // count; SET a from the initial state counts once its run has ended,
  // which a slow build (TSan) may not have reached at the interrupt.
  const int transitions = json["transitions"];
  EXPECT_LE(transitions, 1) << run.out;
  EXPECT_EQ(json["distinct_states"], transitions + 1) << run.out;
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
    EXPECT_TRUE(run_directories_on_host().empty())
        << "a run's directory is left";
    std::filesystem::remove_all(workdirs_);
    Faults::TearDown();
  }
  // Starts cmc on a step that spins (SPIN, with a step timeout far away),
  // sends signal once the target spins, and expects "interrupted".
  static void expect_interrupted(const Started &started, int signal) {
    ASSERT_NE(wait_for_spinning_child(started.pid), -1);
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
