// Nothing of cmc's outlives it, whatever kills it, and a target cannot
// reach cmc: the sandbox of tracer/sandbox/sandbox.h, on the real cmc.

#include <gtest/gtest.h>

#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

namespace fs = std::filesystem;

std::string read_link(const std::string &path) {
  std::error_code error;
  return fs::read_symlink(path, error).string();
}

std::string status_field(pid_t pid, const std::string &field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with(field + ":"))
      return line.substr(field.size() + 1);
  return "";
}

// pid's id in its own PID namespace.
std::string namespace_pid(pid_t pid) {
  std::istringstream ids(status_field(pid, "NSpid"));
  std::string last;
  for (std::string id; ids >> id;)
    last = id;
  return last;
}

// A process the sandbox's init is: pid 1 of its own namespace.
bool is_sandbox_init(pid_t pid) { return namespace_pid(pid) == "1"; }

// The namespaces pid is in, and those its descriptors hold.
std::set<std::string> namespaces_of(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::set<std::string> found;
  for (const char *kind : {"pid", "mnt", "net"})
    found.insert(read_link(proc + "/ns/" + kind));
  std::error_code error;
  for (const auto &entry : fs::directory_iterator(proc + "/fd", error)) {
    const std::string link = read_link(entry.path());
    if (link.starts_with("pid:") || link.starts_with("mnt:") ||
        link.starts_with("net:"))
      found.insert(link);
  }
  found.erase("");
  return found;
}

// Whether pid's environment holds entry (cmc passes its own to its
// targets, and its inits share its memory).
bool carries(pid_t pid, const std::string &entry) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/environ");
  for (std::string variable; std::getline(file, variable, '\0');)
    if (variable == entry)
      return true;
  return false;
}

// Every namespace a process whose environment holds token is in or holds
// open. The kernel numbers namespaces anew from the lowest free number:
// one of ours that has ended may be some other process's new namespace a
// moment later (a test running beside this one), so only the processes
// of this run count.
std::set<std::string> namespaces_in_use(const std::string &token) {
  std::set<std::string> found;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = std::stoi(name);
    if (carries(pid, token)) {
      const auto of = namespaces_of(pid);
      found.insert(of.begin(), of.end());
    }
  }
  return found;
}

// Whether the process of pidfd ends within 10 s. The test is a child
// subreaper: cmc's dead targets come to it, and a sandbox's init ends only
// once every process of its namespace is reaped; so it reaps meanwhile.
bool ends(int pidfd) {
  for (int tenth = 0; tenth < 100; ++tenth) {
    pollfd ready{pidfd, POLLIN, 0};
    if (poll(&ready, 1, 100) == 1)
      return true;
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
  return false;
}

class Sandbox : public ::testing::TestWithParam<int> {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a process outlived cmc";
  }
};

// A -j2 check whose targets spin in a step (the step timeout far away),
// so that cmc is killed mid-check with two targets running, in their
// sandboxes, each with its run directory.
TEST_P(Sandbox, ASignalThatKillsCmcMidCheckLeavesNothing) {
  const int signal = GetParam();
  const rlimit no_core{0, 0}; // SIGQUIT's
  setrlimit(RLIMIT_CORE, &no_core);
  // Marks every process of this run, for the count of namespaces below.
  const std::string run_id =
      std::to_string(getpid()) + "-" + std::to_string(signal);
  const std::string token = "CMC_SANDBOX_TEST=" + run_id;
  setenv("CMC_SANDBOX_TEST", run_id.c_str(), 1);
  const Started started =
      start_cmc({"check", "-q", "-j", "2", "--step-timeout", "100", "-m",
                 "SET a\\n", "-m", "SPIN\\n", "--region", "cmc_state", "--",
                 target("misbehave"), "serve", "7000"});
  unsetenv("CMC_SANDBOX_TEST");
  ASSERT_GT(wait_for_spinning_child(started.pid), 0);
  std::set<std::string> ours = namespaces_of(started.pid);
  std::vector<int> pidfds;
  int run_directories = 0;
  for (const pid_t child : children_of(started.pid)) {
    pidfds.push_back(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
    const auto of = namespaces_of(child);
    ours.insert(of.begin(), of.end());
    if (!is_sandbox_init(child)) {
      EXPECT_EQ(namespace_pid(child), "2") << "a target's pid, in every run";
      continue;
    }
    std::error_code error;
    for (const auto &entry : fs::directory_iterator(
             "/proc/" + std::to_string(child) + "/root/dev/shm", error))
      run_directories += static_cast<int>(
          entry.path().filename().string().starts_with("cmc-run-"));
  }
  for (const std::string &host : namespaces_of(getpid()))
    ours.erase(host);
  // What is checked below existed: the sandboxes, their namespaces (PID,
  // mount, and the network namespaces cmc holds) and the runs' files.
  EXPECT_GE(pidfds.size(), 3U);
  EXPECT_GE(run_directories, 1);
  EXPECT_GE(ours.size(), 4U);
  const std::set<std::string> seen = namespaces_in_use(token);
  EXPECT_TRUE(std::ranges::includes(seen, ours))
      << "the processes of this run are not all marked";
  kill(started.pid, signal);
  const Outcome run = finish(started);
  EXPECT_EQ(run.status, 128 + signal) << run.err;
  for (const int pidfd : pidfds) {
    EXPECT_TRUE(ends(pidfd)) << "a target or sandbox init lives on";
    close(pidfd);
  }
  // Ended, they are our zombies, which still show their PID namespace.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  for (const std::string &left : namespaces_in_use(token))
    EXPECT_FALSE(ours.contains(left)) << left << " outlived cmc";
}

INSTANTIATE_TEST_SUITE_P(Signals, Sandbox,
                         ::testing::Values(SIGKILL, SIGQUIT, SIGUSR1, SIGPIPE));

// getppid() is 0 in the target's PID namespace: kill(getppid(), SIGKILL)
// kills the target's own process group, the target dies of it (a
// violation, as a crash), and cmc goes on.
TEST(SandboxTarget, ATargetThatKillsItsParentKillsItself) {
  const Outcome run = run_cmc({"check", "-q", "--json", "-", "-m", "SET a\\n",
                               "-m", "KILLPARENT\\n", "--region", "cmc_state",
                               "--", target("misbehave"), "serve", "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated") << run.out;
  EXPECT_NE(json.dump().find("SIGKILL"), std::string::npos) << run.out;
  EXPECT_TRUE(reap_leftovers().empty()) << "a process outlived cmc";
}

} // namespace
} // namespace cmc::testing
