#include "app/plugins/plugin_server.h"

#include <dlfcn.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "app/plugins/plugin_wire.h"
#include "util/result.h"

namespace cmc::app {
namespace {

constexpr int kSocketFd = 3; // see app/plugins/plugin_host.cc

// The children of every thread of the host, live or not yet reaped.
std::vector<pid_t> children() {
  std::vector<pid_t> pids;
  std::error_code error;
  for (const auto &task :
       std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream list(task.path() / "children");
    for (pid_t pid = 0; list >> pid;)
      pids.push_back(pid);
  }
  return pids;
}

// Kills and reaps every process the plugin started. The host is a child
// subreaper (run_plugin_server): the kernel makes it the parent of each
// orphan among them, setsid or not, before that orphan's parent can be
// reaped, so each round finds the next generation until none is left.
// Rounds are bounded for a plugin thread that forks without end.
void end_descendants() {
  for (int round = 0; round < 1000; ++round) {
    const std::vector<pid_t> pids = children();
    if (pids.empty())
      return;
    for (const pid_t pid : pids)
      kill(pid, SIGKILL);
    for (const pid_t pid : pids)
      while (waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
      }
  }
}

// Ends the host once cmc's end of the socket is closed, whatever the
// plugin is doing: poll reports POLLHUP on a stream socket whose peer is
// gone even when asked for no event. This, not PR_SET_PDEATHSIG, since that
// signal follows the death of the thread that started the host (a search
// worker of cmc's thread pool), not of cmc.
void exit_with_cmc() {
  std::thread([] {
    pollfd socket{kSocketFd, 0, 0};
    while (poll(&socket, 1, -1) < 0 && errno == EINTR) {
    }
    end_descendants();
    _exit(0);
  }).detach();
}

// The plugin's violation buffer, its last byte the last of a page whose
// next page is not mapped: a plugin that writes past violation_size
// crashes with SIGSEGV at once instead of corrupting the host.
class GuardedBuffer {
public:
  GuardedBuffer() {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void *pages = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED)
      return;
    pages_ = static_cast<char *>(pages);
    mprotect(pages_ + page_, page_, PROT_NONE);
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  GuardedBuffer(GuardedBuffer &&) = delete;
  GuardedBuffer &operator=(GuardedBuffer &&) = delete;
  ~GuardedBuffer() {
    if (pages_ != nullptr)
      munmap(pages_, 2 * page_);
  }

  [[nodiscard]] bool valid() const { return pages_ != nullptr; }
  // Cleared, kViolationSize bytes.
  char *clear() {
    char *buffer = pages_ + page_ - kViolationSize;
    std::memset(buffer, 0, kViolationSize);
    return buffer;
  }

private:
  std::size_t page_ = 0;
  char *pages_ = nullptr;
};

// Sends answer, its text cut to what a reply may hold.
bool reply(Reply answer) {
  answer.text.resize(std::min(answer.text.size(), kViolationSize - 1));
  return write_all(kSocketFd, encode_reply(answer));
}

// The plugin's property, or why it is none. The plugin stays loaded for
// the life of the host.
Result<const cmc_property *> load(const std::string &path) {
  // A name without a slash would be looked up in the library path.
  const std::string file =
      path.find('/') == std::string::npos ? "./" + path : path;
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    return Error{fmt::format("cannot load it: {}", dlerror())};
  const auto *property =
      static_cast<const cmc_property *>(dlsym(handle, "cmc_property"));
  if (property == nullptr)
    return Error{"it defines no cmc_property (a plugin includes "
                 "<cmc/property.h> and uses CMC_PROPERTY)"};
  if (property->abi != CMC_PROPERTY_ABI)
    return Error{fmt::format("built for property ABI {}, but this cmc has "
                             "ABI {}; rebuild it against this cmc's "
                             "cmc/property.h",
                             property->abi, CMC_PROPERTY_ABI)};
  if (property->check == nullptr || property->name == nullptr)
    return Error{"its cmc_property has no name or no check function"};
  return property;
}

// Answers requests until cmc closes the socket; the exit status.
int serve(const cmc_property &property) {
  GuardedBuffer violation;
  if (!violation.valid())
    return 1;
  std::string payload;
  while (true) {
    std::uint64_t size = 0;
    if (!read_exact(kSocketFd, reinterpret_cast<char *>(&size), sizeof size))
      return 0;
    payload.resize(size);
    if (!read_exact(kSocketFd, payload.data(), payload.size()))
      return 0;
    const auto path = DecodedPath::decode(payload);
    if (!path) {
      fmt::print(stderr, "cmc plugin-host: {}\n", path.error().message);
      return 1;
    }
    const cmc_path whole = path->view();
    char *text = violation.clear();
    const int verdict = property.check(&whole, text, kViolationSize);
    text[kViolationSize - 1] = '\0';
    // What the plugin started dies with the call.
    end_descendants();
    if (!reply({verdict == 0 ? ReplyStatus::kHolds : ReplyStatus::kViolated,
                verdict == 0 ? "" : text}))
      return 1;
  }
}

} // namespace

int run_plugin_server(const char *plugin) {
  // Every process the plugin starts stays the host's descendant, however
  // it detaches, so that end_descendants finds it.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    reply({ReplyStatus::kRefused,
           fmt::format("cannot make its host a child subreaper: {}",
                       std::strerror(errno))});
    return 0;
  }
  exit_with_cmc();
  const auto property = load(plugin);
  end_descendants();
  if (!property) {
    reply({ReplyStatus::kRefused, property.error().message});
    return 0;
  }
  if (!reply({ReplyStatus::kLoaded, (*property)->name}))
    return 1;
  return serve(**property);
}

} // namespace cmc::app
