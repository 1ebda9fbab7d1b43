// --property plugins (include/cmc/property.h) on demo/lock_server: the
// example plugin lock_grant sees who was granted the lock in the replies;
// plugins that crash, exit, loop or write garbage (plugins/hostile.c) end
// the command with one line, and nothing of cmc's is left.

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

// Every test's runs make their working directories in a directory of its
// own, which must be empty at the end.
class Plugins : public ::testing::Test {
protected:
  void SetUp() override {
    workdirs_ =
        ::testing::TempDir() + "/cmc-plugins-" + std::to_string(getpid());
    std::filesystem::create_directories(workdirs_);
    setenv("TMPDIR", workdirs_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TMPDIR");
    EXPECT_TRUE(std::filesystem::is_empty(workdirs_))
        << "a run's working directory is left";
    EXPECT_TRUE(run_directories_on_host().empty())
        << "a run's directory is left";
    std::filesystem::remove_all(workdirs_);
    EXPECT_TRUE(reap_leftovers().empty())
        << "a target or plugin host outlived cmc";
  }
  std::string workdirs_;
};

std::string hostile(const std::string &mode) {
  return build_dir() + "/tests/integration/plugins/hostile_" + mode + ".so";
}

std::vector<std::string> lock_check(const std::string &server,
                                    std::vector<std::string> extra) {
  std::vector<std::string> args{
      "check",    "-q", "--json", "-",       "--property", plugin("lock_grant"),
      "--client", "A",  "-m",     "LOCK\\n", "-m",         "UNLOCK\\n",
      "--client", "B",  "-m",     "LOCK\\n", "-m",         "UNLOCK\\n"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(server), "7000"});
  return args;
}

// No region at all: the plugin finds the bug in the replies alone.
TEST_F(Plugins, LockGrantFindsTheSecondGrantInTheReplies) {
  const Outcome run =
      run_cmc(lock_check("lock_server_bug", {"--max-depth", "3"}));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["violation"], "lock-grant: step 3 granted the lock to "
                               "client A, but client A holds it since step 1");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"client": "A", "send": "LOCK\n"},
                                      {"client": "B", "send": "UNLOCK\n"},
                                      {"client": "A", "send": "LOCK\n"}])"));
  EXPECT_EQ(json["replay"]["properties"],
            nlohmann::json::array({plugin("lock_grant")}));
  // The replay checks the plugin too, and names the same violation.
  const Outcome replay =
      run_cmc({"replay", "--client", "A", "--client", "B", "--property",
               plugin("lock_grant"), "--steps", "A:LOCK\\n", "B:UNLOCK\\n",
               "A:LOCK\\n", "--", demo("lock_server_bug"), "7000"});
  EXPECT_EQ(replay.status, 1) << replay.err;
  EXPECT_NE(replay.out.find("  response to B: \"OK\\n\"\n"), std::string::npos)
      << replay.out;
  EXPECT_NE(replay.out.find("violated: lock-grant: step 3 granted the lock"),
            std::string::npos)
      << replay.out;
}

TEST_F(Plugins, LockGrantHoldsOnTheCorrectServer) {
  const Outcome run = run_cmc(lock_check(
      "lock_server", {"--disconnect", "--region", "held", "--invariant",
                      "exclusive", "--forbid-response", "ERR"}));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  // The plugin changes what is checked, not the states.
  const Outcome without = run_cmc({"check", "-q",           "--json",
                                   "-",     "--disconnect", "--client",
                                   "A",     "-m",           "LOCK\\n",
                                   "-m",    "UNLOCK\\n",    "--client",
                                   "B",     "-m",           "LOCK\\n",
                                   "-m",    "UNLOCK\\n",    "--region",
                                   "held",  "--",           demo("lock_server"),
                                   "7000"});
  ASSERT_EQ(without.status, 0) << without.err;
  EXPECT_EQ(json["distinct_states"], without.json()["distinct_states"]);
  EXPECT_EQ(json["transitions"], without.json()["transitions"]);
}

TEST_F(Plugins, APluginThatCannotBeLoadedIsOneLineAndExit2) {
  const std::string missing = "/nonexistent/property.so";
  auto args = lock_check("lock_server", {"--max-depth", "1"});
  args[5] = missing;
  const Outcome run = run_cmc(args);
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "cmc: --property " + missing + ": no such file\n");
  // A shared object that is no plugin.
  args[5] = "/lib/x86_64-linux-gnu/libm.so.6";
  const Outcome libm = run_cmc(args);
  EXPECT_EQ(libm.status, 2);
  EXPECT_NE(libm.err.find("it defines no cmc_property"), std::string::npos)
      << libm.err;
}

// One worker: the first transition checked is the first of depth 1.
std::vector<std::string> hostile_check(const std::string &plugin,
                                       const std::string &step_timeout) {
  return {"check",
          "-q",
          "-j",
          "1",
          "--json",
          "-",
          "--step-timeout",
          step_timeout,
          "--property",
          plugin,
          "--client",
          "A",
          "-m",
          "LOCK\\n",
          "--client",
          "B",
          "-m",
          "UNLOCK\\n",
          "--",
          demo("lock_server"),
          "7000"};
}

// A plugin that misbehaves on its first call, and how cmc says it ended.
struct Misbehaviour {
  std::string mode;
  std::string ended;
};

class HostilePlugins : public Plugins,
                       public ::testing::WithParamInterface<Misbehaviour> {};

TEST_P(HostilePlugins, EndTheCheckWithOneLineAndExit3) {
  const std::string plugin = hostile(GetParam().mode);
  const Outcome run = run_cmc(hostile_check(plugin, "1"));
  EXPECT_EQ(run.status, 3) << run.err;
  const std::string line = "property plugin " + plugin + " " +
                           GetParam().ended +
                           R"( on the path [A: send "LOCK\n"])";
  EXPECT_EQ(run.err, "cmc: " + line + "\n");
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "error") << run.out;
  EXPECT_EQ(json["error"], line);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, HostilePlugins,
    ::testing::Values(Misbehaviour{"segfault", "crashed with SIGSEGV"},
                      Misbehaviour{"abort", "crashed with SIGABRT"},
                      Misbehaviour{"exit", "exited with status 3"},
                      Misbehaviour{"overrun", "crashed with SIGSEGV"},
                      Misbehaviour{"loop", "did not answer within 1s"},
                      Misbehaviour{"garbage", "answered garbage"}),
    [](const auto &info) { return info.param.mode; });

TEST_F(Plugins, APluginThatCrashesWhileLoadedIsExit3) {
  const std::string plugin = hostile("load");
  const Outcome run = run_cmc(hostile_check(plugin, "10"));
  EXPECT_EQ(run.status, 3) << run.err;
  EXPECT_EQ(run.err, "cmc: property plugin " + plugin +
                         " crashed with SIGSEGV while loading it\n");
}

// A plugin's own output goes to cmc's stderr: stdout holds the report.
TEST_F(Plugins, WhatAPluginPrintsIsNotInTheReport) {
  const Outcome run = run_cmc(hostile_check(hostile("noisy"), "10"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["verdict"], "holds") << run.out;
  EXPECT_NE(run.err.find("{\"not\": \"cmc's report\"}"), std::string::npos)
      << run.err;
}

// A truncated copy of lock_grant.so: cut in its ELF header or its program
// headers, ld.so refuses it (exit 2); cut in its segments, ld.so maps
// pages past the end of the file and the host dies of SIGBUS (exit 3).
TEST_F(Plugins, ATruncatedPluginIsRefusedOrCrashesItsHost) {
  const std::string whole = plugin("lock_grant");
  const auto size = std::filesystem::file_size(whole);
  const std::string cut = ::testing::TempDir() + "/cmc-truncated-" +
                          std::to_string(getpid()) + ".so";
  const std::string refused = "cmc: --property " + cut + ": cannot load it: ";
  const std::string crashed =
      "cmc: property plugin " + cut + " crashed with SIGBUS while loading it\n";
  for (const auto &[keep, status] : std::vector<std::pair<std::size_t, int>>{
           {16, 2}, {200, 2}, {size / 4, 3}, {size / 2, 3}}) {
    SCOPED_TRACE(keep);
    std::filesystem::copy_file(
        whole, cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(cut, keep);
    const Outcome run = run_cmc(hostile_check(cut, "10"));
    EXPECT_EQ(run.status, status) << run.err;
    if (status == 2)
      EXPECT_EQ(run.err.substr(0, refused.size()), refused);
    else
      EXPECT_EQ(run.err, crashed);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  std::filesystem::remove(cut);
}

TEST_F(Plugins, ReplayRunsThePluginInItsHost) {
  const std::string plugin = hostile("abort");
  const Outcome run =
      run_cmc({"replay", "--property", plugin, "--client", "A", "--steps",
               "A:LOCK\\n", "--", demo("lock_server"), "7000"});
  EXPECT_EQ(run.status, 3) << run.out << run.err;
  EXPECT_EQ(run.err, "cmc: property plugin " + plugin +
                         " crashed with SIGABRT on the path [A: send "
                         "\"LOCK\\n\"]\n");
}

// explore says so and goes on: the next step starts a new host.
TEST_F(Plugins, ExploreRunsThePluginInItsHost) {
  const std::string plugin = hostile("exit");
  const std::string commands =
      workdirs_ + "/../cmc-plugin-commands-" + std::to_string(getpid());
  std::ofstream(commands) << "send 1\nsend 1\n";
  const Outcome run =
      run_cmc_with_input({"explore", "--property", plugin, "-m", "LOCK\\n",
                          "--", demo("lock_server"), "7000"},
                         commands);
  std::filesystem::remove(commands);
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  const std::string error = "error: property plugin " + plugin +
                            " exited with status 3 on the path [send "
                            "\"LOCK\\n\"";
  const auto first = run.out.find(error + "]\n");
  EXPECT_NE(first, std::string::npos) << run.out;
  EXPECT_NE(run.out.find(error + ", send \"LOCK\\n\"]\n", first),
            std::string::npos)
      << run.out;
}

// Ctrl-C and SIGTERM end a check whose plugin loops, at once.
TEST_F(Plugins, AnInterruptEndsAPluginThatLoops) {
  for (const int signal : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal);
    const Started started = start_cmc(hostile_check(hostile("loop"), "100"));
    ASSERT_NE(wait_for_spinning_child(started.pid), -1);
    kill(started.pid, signal);
    const Outcome run = finish(started);
    EXPECT_EQ(run.status, 3) << run.err;
    // The plugin's call ends with the error; when the search sees the
    // interrupt first, it ends with its partial counts instead (on stderr:
    // the JSON takes stdout).
    EXPECT_TRUE(run.err == "cmc: interrupted\n" ||
                run.err.starts_with("interrupted: 0 distinct states"))
        << run.err;
    EXPECT_EQ(run.json()["error"], "interrupted") << run.out;
  }
}

// The pids a hostile fork or forkloop plugin wrote to file.
std::vector<pid_t> pids_in(const std::string &file) {
  std::vector<pid_t> pids;
  std::ifstream list(file);
  for (pid_t pid = 0; list >> pid;)
    pids.push_back(pid);
  return pids;
}

// Live processes whose environment (as it was at their exec) holds
// entry, NAME=VALUE.
std::vector<pid_t> live_with(const std::string &entry) {
  std::vector<pid_t> pids;
  std::error_code error;
  for (const auto &process :
       std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = process.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream environment(process.path() / "environ");
    for (std::string line; std::getline(environment, line, '\0');)
      if (line == entry)
        pids.push_back(std::stoi(name));
  }
  return pids;
}

// Whether every process whose environment holds entry is gone within
// 10 s. The pids a plugin writes are those of its host's PID namespace,
// which mean other processes here: the processes it started are found by
// the environment they inherited instead. They die as the kernel tears
// that namespace down, after its init has exited; so do the inits of
// cmc's sandboxes, which share cmc's memory and its environment.
bool none_left_soon(const std::string &entry) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!live_with(entry).empty()) {
    if (std::chrono::steady_clock::now() > give_up)
      return false;
    std::this_thread::yield();
  }
  return true;
}

// The host ended: on its own, or killed with its PID namespace.
bool host_ended(int status) {
  return WIFEXITED(status) ||
         (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

// A plugin that forks, and whose grandchild leaves the child and its
// process group, leaves nothing behind: each call's processes die with the
// call, and the verdict and counts are those of the check without it.
TEST_F(Plugins, WhatAPluginStartsDiesWithTheCall) {
  const std::string file =
      ::testing::TempDir() + "/cmc-plugin-pids-" + std::to_string(getpid());
  setenv("CMC_TEST_PID_FILE", file.c_str(), 1);
  auto without = hostile_check(hostile("fork"), "10");
  without.erase(without.begin() + 8, without.begin() + 10);
  const Outcome alone = run_cmc(without);
  ASSERT_EQ(alone.status, 0) << alone.err;
  for (const std::string jobs : {"1", "2"}) {
    SCOPED_TRACE(jobs);
    std::filesystem::remove(file);
    auto args = hostile_check(hostile("fork"), "10");
    args[3] = jobs;
    const Outcome run = run_cmc(args);
    ASSERT_EQ(run.status, 0) << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["verdict"], "holds");
    EXPECT_EQ(json["distinct_states"], alone.json()["distinct_states"]);
    EXPECT_EQ(json["transitions"], alone.json()["transitions"]);
    // Two processes for each transition checked.
    const std::vector<pid_t> pids = pids_in(file);
    EXPECT_EQ(pids.size(), 2 * json["transitions"].get<std::size_t>());
    EXPECT_TRUE(none_left_soon("CMC_TEST_PID_FILE=" + file));
  }
  std::filesystem::remove(file);
  unsetenv("CMC_TEST_PID_FILE");
}

// cmc killed (SIGKILL) or interrupted (Ctrl-C) while the plugin loops
// after it forked: nothing it started is left, not even the process that
// left its parent's process group.
TEST_F(Plugins, WhatAPluginStartsDiesWithCmc) {
  const std::string file =
      ::testing::TempDir() + "/cmc-plugin-pids-" + std::to_string(getpid());
  for (const int signal : {SIGKILL, SIGINT}) {
    SCOPED_TRACE(signal);
    std::filesystem::remove(file);
    setenv("CMC_TEST_PID_FILE", file.c_str(), 1);
    const Started started =
        start_cmc(hostile_check(hostile("forkloop"), "100"));
    unsetenv("CMC_TEST_PID_FILE");
    // It spins once it has written both pids.
    const pid_t host = wait_for_spinning_child(started.pid);
    ASSERT_NE(host, -1);
    const std::vector<pid_t> pids = pids_in(file);
    EXPECT_EQ(pids.size(), 2U);
    kill(started.pid, signal);
    const Outcome run = finish(started);
    if (signal == SIGKILL) {
      int status = 0;
      ASSERT_EQ(waitpid(host, &status, 0), host);
      EXPECT_TRUE(host_ended(status)) << status;
    } else {
      EXPECT_EQ(run.status, 3) << run.err;
    }
    EXPECT_TRUE(none_left_soon("CMC_TEST_PID_FILE=" + file));
  }
  std::filesystem::remove(file);
  std::filesystem::remove_all(workdirs_);
  std::filesystem::create_directories(workdirs_);
}

// A plugin that crashes after it forked: one line naming the signal, and
// nothing it started is left.
TEST_F(Plugins, WhatAPluginStartsDiesWithItsCrash) {
  const std::string file =
      ::testing::TempDir() + "/cmc-plugin-pids-" + std::to_string(getpid());
  std::filesystem::remove(file);
  setenv("CMC_TEST_PID_FILE", file.c_str(), 1);
  const std::string plugin = hostile("forkcrash");
  const Outcome run = run_cmc(hostile_check(plugin, "10"));
  unsetenv("CMC_TEST_PID_FILE");
  EXPECT_EQ(run.status, 3) << run.err;
  EXPECT_EQ(run.err,
            "cmc: property plugin " + plugin +
                R"( crashed with SIGABRT on the path [A: send "LOCK\n"])"
                "\n");
  EXPECT_EQ(pids_in(file).size(), 2U);
  EXPECT_TRUE(none_left_soon("CMC_TEST_PID_FILE=" + file));
  std::filesystem::remove(file);
}

// The host ends with cmc, however cmc ends, even in the middle of a call.
TEST_F(Plugins, TheHostDoesNotOutliveCmc) {
  const Started started = start_cmc(hostile_check(hostile("loop"), "100"));
  const pid_t host = wait_for_spinning_child(started.pid);
  ASSERT_NE(host, -1);
  kill(started.pid, SIGKILL);
  finish(started);
  // The host is our child now (we are a subreaper), and gone.
  int status = 0;
  ASSERT_EQ(waitpid(host, &status, 0), host);
  EXPECT_TRUE(host_ended(status)) << status;
  // cmc could not remove its directories: that is the sandbox's part.
  std::filesystem::remove_all(workdirs_);
  std::filesystem::create_directories(workdirs_);
}

} // namespace
} // namespace cmc::testing
