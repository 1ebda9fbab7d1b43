#include "app/plugins/plugin_host.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tracer/process/wait_status.h"
#include "tracer/sandbox/sandbox.h"
#include "util/duration.h"
#include "util/signal_name.h"

namespace cmc::app {
namespace {

// The host's end of the socket, where app/plugins/plugin_server.cc expects it.
constexpr int kHostSocketFd = 3;

// Everything the host's child needs, prepared before it is cloned: it
// shares cmc's memory until it execs, so it makes system calls only, with
// syscall(2) (see tracee.cc's ChildPlan).
struct HostPlan {
  const char *program;
  char *const *argv;
  char *const *envp;
  int mount_ns; // its sandbox's, whose /proc shows its PID namespace
  int cwd;      // cmc's working directory, which joining a mount namespace
                // leaves
  int socket;   // above kHostSocketFd
  int report;   // above kHostSocketFd, close-on-exec
};

// The child's steps, for the report of the one that failed.
enum class HostStage : int { kSandbox, kDescriptors, kExec };

const char *host_stage_name(HostStage stage) {
  static constexpr std::array kNames{"joining its sandbox",
                                     "setting up its descriptors", "execve"};
  return kNames.at(static_cast<std::size_t>(stage));
}

struct HostFailure {
  HostStage stage;
  int error;
};

[[noreturn]] void host_fail(const HostPlan &plan, HostStage stage) {
  const HostFailure failure{stage, errno};
  syscall(SYS_write, plan.report, &failure, sizeof failure);
  syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// Every signal at its default (an ignored one would stay ignored across
// the exec) and none blocked (cmc blocks SIGINT for its signal thread).
void default_signals() {
  // The kernel's struct sigaction: handler, flags, restorer, mask.
  const std::array<std::uintptr_t, 4> by_default{
      reinterpret_cast<std::uintptr_t>(SIG_DFL), 0, 0, 0};
  const std::uint64_t none = 0; // the kernel's sigset_t
  for (int signal = 1; signal <= 64; ++signal)
    if (signal != SIGKILL && signal != SIGSTOP)
      syscall(SYS_rt_sigaction, signal, by_default.data(), nullptr,
              sizeof none);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none);
}

// The host: socket on its fd 3, stdin from /dev/null and stdout on cmc's
// stderr (what a plugin prints is no reply and no JSON report), in a
// process group of its own, so that a terminal's Ctrl-C reaches only cmc.
[[noreturn]] void host_main(const HostPlan &plan) {
  syscall(SYS_setpgid, 0, 0);
  default_signals();
  if (syscall(SYS_setns, plan.mount_ns, CLONE_NEWNS) != 0 ||
      syscall(SYS_fchdir, plan.cwd) != 0)
    host_fail(plan, HostStage::kSandbox);
  const auto dev_null = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC));
  if (dev_null < 0 || syscall(SYS_dup2, dev_null, STDIN_FILENO) < 0 ||
      syscall(SYS_dup2, STDERR_FILENO, STDOUT_FILENO) < 0 ||
      syscall(SYS_dup2, plan.socket, kHostSocketFd) < 0 ||
      tracer::close_inherited(kHostSocketFd, plan.report) != 0)
    host_fail(plan, HostStage::kDescriptors);
  syscall(SYS_execve, plan.program, plan.argv, plan.envp);
  host_fail(plan, HostStage::kExec);
}

int host_entry(void *plan) { host_main(*static_cast<HostPlan *>(plan)); }

// fd, moved above kHostSocketFd (dup2 onto the socket's place must not
// close it), close-on-exec.
UniqueFd above_socket_fd(UniqueFd fd) {
  if (fd.get() > kHostSocketFd)
    return fd;
  return UniqueFd(fcntl(fd.get(), F_DUPFD_CLOEXEC, kHostSocketFd + 1));
}

// cmc's environment for the host.
std::vector<char *> host_environment(std::string &sanitizer) {
  std::vector<char *> environment;
  for (char **entry = environ; *entry != nullptr; ++entry)
    environment.push_back(*entry);
#ifdef __SANITIZE_ADDRESS__
  // In a sanitizer build of cmc, AddressSanitizer's handlers in the host
  // would take the plugin's fault and exit 1: the host leaves its faults
  // to the kernel, so cmc sees the signal, as in any other build.
  sanitizer = "ASAN_OPTIONS=";
  if (const char *given = std::getenv("ASAN_OPTIONS"))
    sanitizer += std::string(given) + ":";
  sanitizer += "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:"
               "handle_sigill=0";
  std::erase_if(environment, [](const char *entry) {
    return std::string_view(entry).starts_with("ASAN_OPTIONS=");
  });
  environment.push_back(sanitizer.data());
#else
  (void)sanitizer;
#endif
  environment.push_back(nullptr);
  return environment;
}

// Starts program plugin-host plugin in sandbox (pid 2 of its PID
// namespace, a child of cmc's) with socket as its fd 3.
Result<pid_t> spawn(const std::string &program, const std::string &plugin,
                    const tracer::Sandbox &sandbox, UniqueFd socket) {
  std::array<int, 2> report{};
  if (pipe2(report.data(), O_CLOEXEC) != 0)
    return system_error("cannot start its host: pipe", errno);
  UniqueFd report_read(report[0]);
  UniqueFd report_write = above_socket_fd(UniqueFd(report[1]));
  socket = above_socket_fd(std::move(socket));
  const UniqueFd cwd(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!report_write.valid() || !socket.valid() || !cwd.valid())
    return system_error("cannot start its host", errno);
  std::string name = "plugin-host";
  std::string file = plugin;
  std::string self = program;
  const std::array<char *, 4> argv{self.data(), name.data(), file.data(),
                                   nullptr};
  std::string sanitizer;
  const std::vector<char *> environment = host_environment(sanitizer);
  HostPlan plan{program.c_str(),           argv.data(), environment.data(),
                sandbox.mount_namespace(), cwd.get(),   socket.get(),
                report_write.get()};
  // The child's stack until it execs; one per thread, reused.
  alignas(16) thread_local std::array<char, std::size_t{64} * 1024> stack;
  const auto pid = sandbox.spawn_in(host_entry, &plan, stack);
  if (!pid)
    return pid.error();
  report_write.reset();
  // EOF once it has exec'd: its copy of the pipe closes there.
  HostFailure failure{};
  if (read(report_read.get(), &failure, sizeof failure) == sizeof failure) {
    while (waitpid(*pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return system_error(fmt::format("cannot start its host {}: {} failed",
                                    program, host_stage_name(failure.stage)),
                        failure.error);
  }
  return *pid;
}

} // namespace

Result<std::unique_ptr<PluginHost>>
PluginHost::start(const std::string &program, const std::string &plugin,
                  std::chrono::milliseconds limit, Reply &loaded) {
  std::array<int, 2> ends{};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends.data()) != 0)
    return system_error("cannot make a socket for its host", errno);
  UniqueFd mine(ends[0]);
  UniqueFd theirs(ends[1]);
  auto sandbox = tracer::Sandbox::create();
  if (!sandbox)
    return sandbox.error();
  // theirs closes here: then only the host holds the host's end.
  const auto pid = spawn(program, plugin, **sandbox, std::move(theirs));
  if (!pid)
    return pid.error();
  std::unique_ptr<PluginHost> host(
      new PluginHost(*pid, std::move(*sandbox), std::move(mine), limit));
  host->lease_.arm(limit);
  auto reply = host->receive();
  host->lease_.disarm();
  if (!reply)
    return reply.error();
  loaded = std::move(*reply);
  if (loaded.status != ReplyStatus::kLoaded &&
      loaded.status != ReplyStatus::kRefused)
    return host->kill_for("answered garbage when loaded");
  return host;
}

PluginHost::PluginHost(pid_t pid, std::unique_ptr<tracer::Sandbox> sandbox,
                       UniqueFd socket, std::chrono::milliseconds limit)
    : pid_(pid), sandbox_(std::move(sandbox)), socket_(std::move(socket)),
      host_pidfd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))),
      limit_(limit), lease_(pid) {}

PluginHost::~PluginHost() {
  if (!reaped_)
    kill_for("done");
}

Result<Reply> PluginHost::call(std::string_view request) {
  lease_.arm(limit_);
  if (!write_all(socket_.get(), request))
    return ended();
  auto reply = receive();
  if (reply) {
    lease_.disarm();
    if (reply->status != ReplyStatus::kHolds &&
        reply->status != ReplyStatus::kViolated)
      return kill_for("answered garbage");
  }
  return reply;
}

Result<Reply> PluginHost::receive() {
  std::array<char, kReplyHeaderSize> header{};
  if (!read_exact(socket_.get(), header.data(), header.size(),
                  host_pidfd_.get()))
    return ended();
  const auto decoded =
      decode_reply_header(std::string_view(header.data(), header.size()));
  if (!decoded)
    return kill_for(decoded.error().message);
  Reply reply{decoded->first, std::string(decoded->second, '\0')};
  if (!read_exact(socket_.get(), reply.text.data(), reply.text.size(),
                  host_pidfd_.get()))
    return ended();
  return reply;
}

Error PluginHost::ended() {
  socket_.reset();
  int raw = 0;
  while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  // What the plugin started, setsid or not, dies with the host's namespace.
  sandbox_.reset();
  lease_.disarm();
  const tracer::WaitStatus status(raw);
  if (tracer::Watchdog::instance().interrupted())
    return interrupted_error();
  if (lease_.expired())
    return Error{
        fmt::format("did not answer within {}", format_duration(limit_))};
  if (status.killed())
    return Error{"crashed with " + signal_name(status.term_signal())};
  return Error{fmt::format("exited with status {}", status.exit_status())};
}

Error PluginHost::kill_for(const std::string &why) {
  socket_.reset();
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  sandbox_.reset();
  return Error{why};
}

} // namespace cmc::app
