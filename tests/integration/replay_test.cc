// cmc replay: a counterexample run once, step by step, with every system
// call the target made, its replies, region changes and (on request) the
// user stack of each call.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Replay : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cmc-replay-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
  [[nodiscard]] std::string path(const std::string &name) const {
    return (dir_ / name).string();
  }
  // cmc check's JSON report on kv_bug, in report.json.
  std::string bug_report() {
    std::string report = path("report.json");
    const Outcome check =
        run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
                 "cmc_state", "--invariant", "sticky", "--json", report, "--",
                 demo("kv_bug"), "7000"});
    EXPECT_EQ(check.status, 1) << check.err;
    return report;
  }
  std::filesystem::path dir_;
};

TEST_F(Replay, TheBugCounterexampleReproducesWithEachStepsCalls) {
  const Outcome replay = run_cmc({"replay", "--from", bug_report()});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("step 1: send \"SET b\\n\"\n"
                            "  read(4, \"SET b\\n\", 255) = 6\n"
                            "  write(4, \"OK\\n\", 3) = 3\n"),
            std::string::npos)
      << replay.out;
  EXPECT_NE(replay.out.find("  response: \"OK\\n\"\n"
                            "  changed: cmc_state+0 00 -> 01\n"
                            "  changed: cmc_state+1 01 -> 00\n"
                            "violated: sticky: byte 1 of cmc_state went 01 "
                            "-> 00 (at step 2 of 2)"),
            std::string::npos)
      << replay.out;
}

TEST_F(Replay, BacktracesShowTheDemosFunctionsAndLines) {
  const Outcome replay =
      run_cmc({"replay", "--backtrace", "--from", bug_report()});
  EXPECT_EQ(replay.status, 1) << replay.err;
  // Each step's write, from kv's serve(), called by main().
  const std::regex write_frame(
      R"(write\(4, "OK\\n", 3\) = 3\n +#0 [^\n]*write[^\n]*\n +#1 serve\+0x[0-9a-f]+ \(kv\.c:[0-9]+\)\n +#2 main\+)");
  const auto begin =
      std::sregex_iterator(replay.out.begin(), replay.out.end(), write_frame);
  EXPECT_EQ(std::distance(begin, std::sregex_iterator()), 2) << replay.out;
}

TEST_F(Replay, CheckPrintsTheCommandThatReplaysIt) {
  const Outcome check = run_cmc(
      {"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
       "cmc_state", "--invariant", "sticky", "--", demo("kv_bug"), "7000"});
  const std::string marker = "replay it: cmc ";
  const auto at = check.out.find(marker);
  ASSERT_NE(at, std::string::npos) << check.out;
  const std::string line = check.out.substr(
      at + marker.size(), check.out.find('\n', at) - at - marker.size());
  EXPECT_EQ(line, "replay --region cmc_state --invariant sticky --steps "
                  "'SET b\\n' 'SET a\\n' -- " +
                      demo("kv_bug") + " 7000");
  // The shell runs it as printed.
  const std::string shell = cmc_binary() + " " + line + " > /dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(shell.c_str())), 1);
}

TEST_F(Replay, StepsThatBreakNothingExitZero) {
  const Outcome replay =
      run_cmc({"replay", "--region", "cmc_state", "--invariant", "sticky",
               "--steps", "SET a\\n", "SET b\\n", "--", demo("kv"), "7000"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("no violation in 2 steps"), std::string::npos);
  EXPECT_EQ(count_of(replay.out, "write(4, \"OK\\n\", 3) = 3"), 2U);
}

// The counterexample of kv_bug, replayed on the fixed kv: the bug is gone.
TEST_F(Replay, AFixedBuildDoesNotReproduce) {
  const Outcome replay =
      run_cmc({"replay", "--from", bug_report(), "--", demo("kv"), "7000"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("does not reproduce: sticky: byte 1 of cmc_state "
                            "went 01 -> 00; the report found it with " +
                            demo("kv_bug")),
            std::string::npos)
      << replay.out;
  EXPECT_EQ(replay.err, "");
}

// The report's own build not showing its violation: cmc's control failed.
TEST_F(Replay, TheSameBuildNotReproducingIsNondeterminism) {
  const std::string report = bug_report();
  auto json = nlohmann::json::parse(std::ifstream(report));
  json["counterexample"] = nlohmann::json::parse(R"([{"send": "SET a\n"}])");
  std::ofstream(report) << json.dump();
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 3) << replay.err;
  EXPECT_NE(replay.err.find("did not reproduce with the build that showed "
                            "it"),
            std::string::npos)
      << replay.err;
  EXPECT_NE(replay.err.find("not deterministic"), std::string::npos);
}

// A report that does not name its build: cmc cannot tell which it is.
TEST_F(Replay, AViolationThatDoesNotReproduceIsAWarning) {
  const std::string report = path("stale.json");
  std::ofstream(report) << R"({"verdict": "violated",
    "counterexample": [{"send": "SET b\n"}, {"send": "SET a\n"}],
    "violation": "sticky: byte 1 of cmc_state went 01 -> 00",
    "replay": {"command": [")"
                        << demo("kv") << R"(", "7000"],
      "regions": ["cmc_state"], "invariant": "sticky"}})";
  const Outcome replay = run_cmc({"replay", "--from", report});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("does not reproduce"), std::string::npos);
  EXPECT_NE(replay.out.find("does not say which build"), std::string::npos);
}

TEST_F(Replay, TicksReplayOnTheVirtualClock) {
  const Outcome replay =
      run_cmc({"replay", "--region", "cmc_state", "--invariant", "sticky",
               "--tick", "10s", "--steps", "SET b\\n", "tick", "SET a\\n", "--",
               demo("clock_kv_bug"), "7000"});
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("step 2: tick 10s"), std::string::npos);
  EXPECT_NE(replay.out.find("[vDSO __vdso_clock_gettime]"), std::string::npos)
      << replay.out;
}

TEST_F(Replay, BadRequestsAreUsageErrors) {
  EXPECT_EQ(run_cmc({"replay", "--", demo("kv"), "7000"}).status, 2);
  EXPECT_EQ(
      run_cmc({"replay", "--steps", "tick", "--", demo("kv"), "7000"}).status,
      2);
  const Outcome missing = run_cmc({"replay", "--from", path("none.json")});
  EXPECT_EQ(missing.status, 3);
  EXPECT_EQ(missing.err, "cmc: cannot read the report " + path("none.json") +
                             ": No such file or directory\n");
}

// strace-grade traces: named flags and constants, -s, -e trace=, -o,
// replay --json with each step's calls; and check's start banner.

// The names of the calls on the trace's lines: "  name(" at the start.
std::vector<std::string> call_names(const std::string &text,
                                    const std::string &indent) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(indent) || line.starts_with(indent + " "))
      continue;
    const auto open = line.find('(');
    const std::string name = line.substr(indent.size(), open - indent.size());
    if (open != std::string::npos &&
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
            std::string::npos)
      names.push_back(name);
  }
  return names;
}

// cmc replay of SET a on kv, with the calls before it, and options.
Outcome replay_kv(std::vector<std::string> options) {
  std::vector<std::string> args{"replay", "--startup", "--region", "cmc_state"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--steps", "SET a\\n", "--", demo("kv"), "7000"});
  return run_cmc(args);
}

TEST_F(Replay, TraceFlagsAndConstantsAreNamed) {
  const Outcome run = replay_kv({});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, ", PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, "
                           "-1, 0) = 0x"))
      << run.out;
  EXPECT_TRUE(has(run.out, "  socket(AF_INET, SOCK_STREAM, IPPROTO_IP) = 3\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "  setsockopt(3, SOL_SOCKET, SO_REUSEADDR, 0x"))
      << run.out;
  EXPECT_TRUE(has(run.out,
                  "  bind(3, {sa_family=AF_INET, sin_port=htons(7000), "
                  "sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "openat(AT_FDCWD, \"")) << run.out;
  EXPECT_TRUE(has(run.out, "O_RDONLY|O_CLOEXEC) = 3")) << run.out;
  EXPECT_TRUE(has(run.out, " = -1 ENOENT (No such file or directory)\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "  read(4, \"SET a\\n\", 255) = 6\n")) << run.out;
}

TEST_F(Replay, TraceSetsShowOnlyTheirCalls) {
  const Outcome run = replay_kv({"-e", "trace=accept,write"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(call_names(run.out, "  "),
            (std::vector<std::string>{"accept", "write"}))
      << run.out;
  const Outcome network = replay_kv({"-e", "trace=%network"});
  EXPECT_EQ(call_names(network.out, "  "),
            (std::vector<std::string>{"socket", "setsockopt", "bind", "listen",
                                      "accept"}))
      << network.out;
  const Outcome memory = replay_kv({"-e", "trace=!%memory,%file,read"});
  const auto names = call_names(memory.out, "  ");
  EXPECT_TRUE(std::ranges::find(names, "write") != names.end()) << memory.out;
  for (const char *hidden : {"mmap", "openat", "read", "brk"})
    EXPECT_TRUE(std::ranges::find(names, hidden) == names.end())
        << hidden << " in " << memory.out;
}

TEST_F(Replay, TraceOfAnUnknownCallIsAUsageError) {
  const Outcome run = replay_kv({"-e", "trace=read,frobnicate"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.err, "cmc: -e trace: 'frobnicate' is no system call or class "
                     "(%file, %desc, %network, %memory, %process, %signal)\n");
  EXPECT_EQ(run.out, "");
}

TEST_F(Replay, TraceStringLimitCutsBuffers) {
  const Outcome run = replay_kv({"-s", "4"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "  read(4, \"SET \"..., 255) = 6\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  write(4, \"OK\\n\", 3) = 3\n")) << run.out;
  // Paths are whole, as strace shows them.
  EXPECT_TRUE(has(run.out, "\"/etc/ld.so.cache\"")) << run.out;
}

TEST_F(Replay, TraceOutputGoesToAFile) {
  const std::string file = path("trace.txt");
  const Outcome run = replay_kv({"-o", file, "-e", "trace=read,write"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(call_names(run.out, "  ").empty()) << run.out;
  EXPECT_TRUE(has(run.out, "step 1: send \"SET a\\n\"\n")) << run.out;
  std::ifstream in(file);
  const std::string trace{std::istreambuf_iterator<char>(in), {}};
  EXPECT_TRUE(has(trace, "read(4, \"SET a\\n\", 255) = 6\n"
                         "write(4, \"OK\\n\", 3) = 3\n"))
      << trace;
}

TEST_F(Replay, TraceJsonHasEachStepsCallsRepliesAndChanges) {
  const std::string file = path("replay.json");
  const Outcome run =
      run_cmc({"replay", "--json", file, "--region", "cmc_state", "--invariant",
               "sticky", "--steps", "SET b\\n", "SET a\\n", "--",
               demo("kv_bug"), "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  std::ifstream in(file);
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(json.is_object()) << file;
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["violation_step"], 2);
  EXPECT_EQ(json["violation"], "sticky: byte 1 of cmc_state went 01 -> 00");
  EXPECT_FALSE(json["startup_syscalls"].empty());
  ASSERT_EQ(json["steps"].size(), 2U) << json.dump(2);
  const nlohmann::json &second = json["steps"][1];
  EXPECT_EQ(second["send"], "SET a\n");
  ASSERT_EQ(second["syscalls"].size(), 2U) << second.dump(2);
  EXPECT_EQ(second["syscalls"][0],
            (nlohmann::json{{"name", "read"},
                            {"args", {"4", "\"SET a\\n\"", "255"}},
                            {"result", "6"},
                            {"text", "read(4, \"SET a\\n\", 255) = 6"}}));
  EXPECT_EQ(second["syscalls"][1]["name"], "write");
  // The buffer's address depends on the environment's size.
  EXPECT_TRUE(second["waiting_in"].get<std::string>().starts_with("read(4, 0x"))
      << second.dump(2);
  EXPECT_EQ(second["replies"],
            (nlohmann::json{{{"client", nullptr}, {"bytes", "OK\n"}}}));
  EXPECT_EQ(
      second["changes"],
      (nlohmann::json{
          {{"region", "cmc_state"}, {"offset", 0}, {"before", 0}, {"after", 1}},
          {{"region", "cmc_state"},
           {"offset", 1},
           {"before", 1},
           {"after", 0}}}));
}

// Without --region the state is the whole process: each step's change is
// named by the program's data objects, in the text and in the JSON.
TEST_F(Replay, WholeProcessChangesAreNamedByDataObject) {
  const std::string file = path("replay.json");
  const Outcome run = run_cmc({"replay", "--json", file, "--steps", "SET a\\n",
                               "SET b\\n", "--", demo("kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_FALSE(has(run.out, "nothing in the regions")) << run.out;
  EXPECT_EQ(count_of(run.out, "  changed: .bss of kv: cmc_state+0 00 -> 01\n"),
            1U)
      << run.out;
  EXPECT_EQ(count_of(run.out, "  changed: .bss of kv: cmc_state+1 00 -> 01\n"),
            1U)
      << run.out;
  // In order: SET a's step sets byte 0, SET b's byte 1.
  EXPECT_LT(run.out.find("cmc_state+0 00 -> 01"), run.out.find("step 2:"));
  EXPECT_GT(run.out.find("cmc_state+1 00 -> 01"), run.out.find("step 2:"));
  std::ifstream in(file);
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  ASSERT_EQ(json["steps"].size(), 2U) << json.dump(2);
  const auto lines = [&](std::size_t step) {
    return json["steps"][step]["state_changes"].get<std::vector<std::string>>();
  };
  const auto holds = [](const std::vector<std::string> &all,
                        const std::string &line) {
    return std::find(all.begin(), all.end(), line) != all.end();
  };
  EXPECT_TRUE(holds(lines(0), ".bss of kv: cmc_state+0 00 -> 01"))
      << json.dump(2);
  EXPECT_FALSE(holds(lines(0), ".bss of kv: cmc_state+1 00 -> 01"));
  EXPECT_TRUE(holds(lines(1), ".bss of kv: cmc_state+1 00 -> 01"))
      << json.dump(2);
  EXPECT_TRUE(json["steps"][1]["changes"].empty());
}

// With --json -, stdout is the report alone and the text goes to stderr,
// as with cmc check.
TEST_F(Replay, JsonOnStdoutMovesTheTextToStderr) {
  const Outcome run = run_cmc({"replay", "--json", "-", "--region", "cmc_state",
                               "--invariant", "sticky", "--steps", "SET b\\n",
                               "SET a\\n", "--", demo("kv_bug"), "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  const nlohmann::json json = run.json();
  ASSERT_TRUE(json.is_object()) << run.out;
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["steps"].size(), 2U) << run.out;
  EXPECT_TRUE(has(run.err, "step 2: send \"SET a\\n\"\n"
                           "  read(4, \"SET a\\n\", 255) = 6\n"))
      << run.err;
  EXPECT_TRUE(has(run.err, "  changed: cmc_state+1 01 -> 00\n")) << run.err;
  EXPECT_TRUE(has(run.err, "violated: sticky: byte 1 of cmc_state went 01 -> "
                           "00 (at step 2 of 2)\n"))
      << run.err;
}

// TLC's habit: the settings of the search before it starts.
TEST_F(Replay, CheckSaysItsSettingsBeforeItStarts) {
  const Outcome run =
      run_cmc({"check", "-j", "1", "--max-depth", "3", "--seed", "7", "-m",
               "SET a\\n", "--region", "cmc_state", "--", demo("kv"), "7000"});
  EXPECT_EQ(run.status, 0) << run.err;
  // The mode is the default's, whichever that is.
  EXPECT_TRUE(run.err.starts_with("cmc: breadth-first search of " + demo("kv") +
                                  ", 1 action: 1 worker, --mode "))
      << run.err;
  EXPECT_TRUE(has(run.err, ", state regions (cmc_state; merges audited "
                           "against the whole process), depth at most 3, "
                           "states unbounded, --seed 7, started "))
      << run.err;
  // The start, in UTC.
  EXPECT_TRUE(std::regex_search(
      run.err,
      std::regex(", started "
                 "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\n")))
      << run.err;
  const Outcome quiet = run_cmc({"check", "-q", "-m", "SET a\\n", "--region",
                                 "cmc_state", "--", demo("kv"), "7000"});
  EXPECT_EQ(quiet.err, "") << quiet.err;
}

} // namespace
} // namespace cmc::testing
