#include "tests/integration/run_cmc.h"

#include <algorithm>

#include <cstdio>
#include <filesystem>

#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "tracer/sandbox/sandbox.h"
#include "util/unique_fd.h"

namespace cmc::testing {
namespace {

std::string self_dir() {
  std::array<char, 4096> path{};
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0)
    throw std::runtime_error("readlink /proc/self/exe");
  std::string dir(path.data(), static_cast<std::size_t>(n));
  return dir.substr(0, dir.rfind('/'));
}

// Set up once: orphans of cmc's targets are re-parented to us.
const bool kSubreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;

struct ProcStat {
  char state = 0;
  pid_t ppid = -1;
};

ProcStat stat_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  ProcStat stat_line;
  if (close == std::string::npos)
    return stat_line;
  std::istringstream rest(line.substr(close + 2));
  rest >> stat_line.state >> stat_line.ppid;
  return stat_line;
}

// Clock ticks pid has run in user mode (utime, field 14 of its stat).
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

// Children of pid, with or without zombies.
std::vector<pid_t> children(pid_t pid, bool zombies) {
  std::vector<pid_t> found;
  DIR *proc = opendir("/proc");
  while (const dirent *entry = readdir(proc)) {
    const auto candidate = static_cast<pid_t>(std::atoi(entry->d_name));
    if (candidate <= 0)
      continue;
    const ProcStat stat_line = stat_of(candidate);
    if (stat_line.ppid == pid && (zombies || stat_line.state != 'Z'))
      found.push_back(candidate);
  }
  closedir(proc);
  return found;
}

void read_both(int out_fd, int err_fd, std::string &out, std::string &err) {
  std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0},
                            pollfd{err_fd, POLLIN, 0}};
  std::array<std::string *, 2> into{&out, &err};
  int open_fds = 2;
  std::array<char, 4096> buffer{};
  while (open_fds > 0 && poll(fds.data(), fds.size(), -1) > 0) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        into[i]->append(buffer.data(), static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
}

// The value of --json in args ("--json X" or "--json=X"), "" without one.
std::string json_destination(const std::vector<std::string> &args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--")
      break;
    if (args[i] == "--json" && i + 1 < args.size())
      return args[i + 1];
    if (args[i].starts_with("--json="))
      return args[i].substr(std::string_view("--json=").size());
  }
  return "";
}

// The report run wrote, copied to reports_dir(): from stdout with --json -,
// else from the file (a regular one: not /dev/full). Nothing when cmc
// wrote none (a usage error before it).
void keep_report(const Started &started, const Outcome &run) {
  if (started.json.empty() || started.command.empty())
    return;
  // A test process that asked for one: with none kept, the schema check
  // fails (a selection of tests that asks for none has nothing to check).
  std::filesystem::create_directories(reports_dir());
  const std::ofstream asked(
      fmt::format("{}/asked-by-{}", reports_dir(), getpid()));
  std::string report = run.out;
  if (started.json != "-") {
    std::error_code error;
    if (!std::filesystem::is_regular_file(started.json, error))
      return;
    std::ifstream file(started.json, std::ios::binary);
    report.assign(std::istreambuf_iterator<char>(file), {});
  }
  if (report.empty())
    return;
  static std::atomic<int> count{0};
  const std::string dir = reports_dir() + "/" + started.command;
  std::filesystem::create_directories(dir);
  std::ofstream(fmt::format("{}/{}-{}.json", dir, getpid(), count++),
                std::ios::binary)
      << report;
}

} // namespace

std::string reports_dir() { return build_dir() + "/tests/reports"; }

std::string build_dir() { return self_dir() + "/../.."; }
std::string cmc_binary() { return build_dir() + "/tools/cmc"; }
std::string demo(const std::string &name) {
  return build_dir() + "/demo/" + name;
}
std::string plugin(const std::string &name) {
  return demo("properties/" + name + ".so");
}
std::string target(const std::string &name) {
  return self_dir() + "/targets/" + name;
}

nlohmann::json Outcome::json() const {
  return nlohmann::json::parse(out, nullptr, false);
}

CmcArgv::CmcArgv(const std::vector<std::string> &args)
    : strings_{cmc_binary()} {
  strings_.insert(strings_.end(), args.begin(), args.end());
  for (std::string &arg : strings_)
    pointers_.push_back(arg.data());
  pointers_.push_back(nullptr);
}

Started start_cmc(const std::vector<std::string> &args,
                  const std::string &input) {
  if (!kSubreaper)
    throw std::runtime_error("PR_SET_CHILD_SUBREAPER failed");
  std::array<int, 2> out{};
  std::array<int, 2> err{};
  if (pipe(out.data()) != 0 || pipe(err.data()) != 0)
    throw std::runtime_error("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, input.c_str(),
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, err[0]);
  const CmcArgv argv(args);
  Started started;
  if (posix_spawn(&started.pid, argv.program(), &actions, nullptr, argv.get(),
                  environ) != 0)
    throw std::runtime_error("posix_spawn cmc");
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  started.out_fd = out[0];
  started.err_fd = err[0];
  if (!args.empty())
    started.command = args.front();
  started.json = json_destination(args);
  return started;
}

Outcome finish(const Started &started) {
  Outcome run;
  read_both(started.out_fd, started.err_fd, run.out, run.err);
  int status = 0;
  waitpid(started.pid, &status, 0);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  keep_report(started, run);
  return run;
}

Outcome run_cmc(const std::vector<std::string> &args) {
  return finish(start_cmc(args));
}

Outcome run_cmc_with_input(const std::vector<std::string> &args,
                           const std::string &input) {
  return finish(start_cmc(args, input));
}

std::vector<pid_t> children_of(pid_t pid) { return children(pid, false); }

pid_t wait_for_spinning_child(pid_t parent) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    for (const pid_t child : children_of(parent))
      if (user_ticks(child) * 1000 / sysconf(_SC_CLK_TCK) >= 50)
        return child;
    std::this_thread::yield();
  }
  return -1;
}

std::vector<pid_t> reap_leftovers() {
  // A traced process that is not cmc's own child is reaped by cmc as its
  // tracer, then reported once more to its real parent: when that parent
  // has died too, the dead process comes to us as a zombie. Only live
  // processes count as leaked; the sandboxes of a test that runs targets
  // itself last as long as the test.
  const std::vector<pid_t> inits = tracer::Sandbox::inits();
  const auto ours = [&inits](pid_t pid) {
    return std::ranges::find(inits, pid) != inits.end();
  };
  // The dead first: the init of a killed cmc's sandbox ends only once
  // every process of its namespace is reaped, a target that came to us
  // dead among them.
  for (const pid_t pid : children(getpid(), true))
    if (!ours(pid) && stat_of(pid).state == 'Z')
      waitpid(pid, nullptr, 0);
  std::vector<pid_t> live = children(getpid(), false);
  std::erase_if(live, ours);
  // The init of a sandbox whose cmc was killed comes to us as well, and
  // exits on its own once it has read the end of cmc's pipe: on a loaded
  // machine it may not have run yet. A process that ends within seconds
  // has not outlived cmc.
  std::erase_if(live, [](pid_t pid) {
    const UniqueFd exit(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    pollfd ended{exit.get(), POLLIN, 0};
    return !exit.valid() || poll(&ended, 1, 5000) == 1;
  });
  for (const pid_t pid : children(getpid(), true)) {
    if (ours(pid))
      continue;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return live;
}

int objdump_count(const std::string &path, const std::string &pattern) {
  const std::string command =
      "objdump -d " + path + " | grep -cP '\\t" + pattern + "\\s*$'";
  FILE *pipe = popen(command.c_str(), "r");
  int count = -1;
  if (pipe != nullptr && std::fscanf(pipe, "%d", &count) != 1)
    count = -1;
  if (pipe != nullptr)
    pclose(pipe);
  return count;
}

std::vector<std::string> run_directories_on_host() {
  std::vector<std::string> found;
  for (const std::filesystem::path &dir :
       {std::filesystem::path("/dev/shm"),
        std::filesystem::temp_directory_path()}) {
    std::error_code error;
    for (const auto &entry : std::filesystem::directory_iterator(dir, error))
      if (entry.path().filename().string().starts_with("cmc-run-"))
        found.push_back(entry.path());
  }
  return found;
}

} // namespace cmc::testing
