#include "app/plugins/plugin_host.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tracer/process/wait_status.h"
#include "util/duration.h"
#include "util/signal_name.h"

namespace cmc::app {
namespace {

// The host's end of the socket, where app/plugins/plugin_server.cc expects it.
constexpr int kHostSocketFd = 3;

// Owners of posix_spawn's attribute objects.
struct SpawnActions {
  posix_spawn_file_actions_t actions{};
  SpawnActions() { posix_spawn_file_actions_init(&actions); }
  SpawnActions(const SpawnActions &) = delete;
  SpawnActions &operator=(const SpawnActions &) = delete;
  SpawnActions(SpawnActions &&) = delete;
  SpawnActions &operator=(SpawnActions &&) = delete;
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
};

struct SpawnAttributes {
  posix_spawnattr_t attributes{};
  SpawnAttributes() { posix_spawnattr_init(&attributes); }
  SpawnAttributes(const SpawnAttributes &) = delete;
  SpawnAttributes &operator=(const SpawnAttributes &) = delete;
  SpawnAttributes(SpawnAttributes &&) = delete;
  SpawnAttributes &operator=(SpawnAttributes &&) = delete;
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes); }
};

// Starts program plugin-host plugin with socket on its fd 3, stdin from
// /dev/null and stdout on cmc's stderr (what a plugin prints is no reply
// and no JSON report), in a process group of its own, with every signal at
// its default and none blocked (cmc blocks SIGINT for its signal thread).
Result<pid_t> spawn(const std::string &program, const std::string &plugin,
                    int socket) {
  SpawnActions files;
  posix_spawn_file_actions_addopen(&files.actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&files.actions, STDERR_FILENO,
                                   STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&files.actions, socket, kHostSocketFd);
  posix_spawn_file_actions_addclosefrom_np(&files.actions, kHostSocketFd + 1);
  SpawnAttributes attributes;
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes.attributes, &signals);
  sigfillset(&signals);
  posix_spawnattr_setsigdefault(&attributes.attributes, &signals);
  posix_spawnattr_setpgroup(&attributes.attributes, 0);
  posix_spawnattr_setflags(&attributes.attributes, POSIX_SPAWN_SETSIGMASK |
                                                       POSIX_SPAWN_SETSIGDEF |
                                                       POSIX_SPAWN_SETPGROUP);
  std::string name = "plugin-host";
  std::string file = plugin;
  std::string self = program;
  const std::array<char *, 4> argv{self.data(), name.data(), file.data(),
                                   nullptr};
  std::vector<char *> environment;
  for (char **entry = environ; *entry != nullptr; ++entry)
    environment.push_back(*entry);
#ifdef __SANITIZE_ADDRESS__
  // In a sanitizer build of cmc, AddressSanitizer's handlers in the host
  // would take the plugin's fault and exit 1: the host leaves its faults
  // to the kernel, so cmc sees the signal, as in any other build.
  std::string sanitizer = "ASAN_OPTIONS=";
  if (const char *given = std::getenv("ASAN_OPTIONS"))
    sanitizer += std::string(given) + ":";
  sanitizer += "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:"
               "handle_sigill=0";
  std::erase_if(environment, [](const char *entry) {
    return std::string_view(entry).starts_with("ASAN_OPTIONS=");
  });
  environment.push_back(sanitizer.data());
#endif
  environment.push_back(nullptr);
  pid_t pid = 0;
  if (const int error =
          posix_spawn(&pid, program.c_str(), &files.actions,
                      &attributes.attributes, argv.data(), environment.data());
      error != 0)
    return system_error(fmt::format("cannot start its host {}", program),
                        error);
  return pid;
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
  // dup2 onto itself would leave close-on-exec set.
  if (theirs.get() == kHostSocketFd)
    theirs = UniqueFd(fcntl(theirs.get(), F_DUPFD_CLOEXEC, kHostSocketFd + 1));
  const auto pid = spawn(program, plugin, theirs.get());
  if (!pid)
    return pid.error();
  std::unique_ptr<PluginHost> host(
      new PluginHost(*pid, std::move(mine), limit));
  theirs.reset(); // the host's end: now only the host holds it
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

PluginHost::PluginHost(pid_t pid, UniqueFd socket,
                       std::chrono::milliseconds limit)
    : pid_(pid), socket_(std::move(socket)), limit_(limit), lease_(pid) {}

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
  if (!read_exact(socket_.get(), header.data(), header.size()))
    return ended();
  const auto decoded =
      decode_reply_header(std::string_view(header.data(), header.size()));
  if (!decoded)
    return kill_for(decoded.error().message);
  Reply reply{decoded->first, std::string(decoded->second, '\0')};
  if (!read_exact(socket_.get(), reply.text.data(), reply.text.size()))
    return ended();
  return reply;
}

Error PluginHost::ended() {
  socket_.reset();
  // Its process group outlives a host that died in a call: what the plugin
  // started is killed while the host, a zombie, still holds the group's id.
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 &&
         errno == EINTR) {
  }
  kill(-pid_, SIGKILL);
  int raw = 0;
  while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
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
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return Error{why};
}

} // namespace cmc::app
