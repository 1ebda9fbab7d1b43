#include "tracer/net/target_socket.h"

#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace cmc::tracer {
namespace {

bool same_address(const sockaddr_storage &a, const sockaddr_storage &b) {
  if (a.ss_family != b.ss_family)
    return false;
  if (a.ss_family == AF_INET) {
    const auto &x = reinterpret_cast<const sockaddr_in &>(a);
    const auto &y = reinterpret_cast<const sockaddr_in &>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    const auto &x = reinterpret_cast<const sockaddr_in6 &>(a);
    const auto &y = reinterpret_cast<const sockaddr_in6 &>(b);
    return x.sin6_port == y.sin6_port &&
           std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
  }
  return false;
}

int queued(const UniqueFd &socket, unsigned long request) {
  int bytes = 0;
  return ioctl(socket.get(), request, &bytes) == 0 ? bytes : 0;
}

} // namespace

std::optional<UniqueFd> TargetSocket::at(const Tracee &tracee, pid_t process,
                                         int fd) const {
  auto copy = tracee.duplicate_fd_of(process, fd);
  if (!copy)
    return std::nullopt;
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (getpeername(copy->get(), reinterpret_cast<sockaddr *>(&peer), &length) !=
          0 ||
      !same_address(peer, peer_))
    return std::nullopt;
  return copy;
}

std::optional<UniqueFd> TargetSocket::find(const Tracee &tracee) {
  if (fd_ >= 0)
    if (auto found = at(tracee, process_, fd_))
      return found;
  for (const pid_t process : tracee.processes())
    if (auto found = search(tracee, process))
      return found;
  return std::nullopt;
}

std::optional<UniqueFd> TargetSocket::search(const Tracee &tracee,
                                             pid_t process) {
  const std::string dir = fmt::format("/proc/{}/fd", process);
  const std::unique_ptr<DIR, int (*)(DIR *)> entries(opendir(dir.c_str()),
                                                     closedir);
  if (!entries)
    return std::nullopt;
  while (const dirent *entry = readdir(entries.get())) {
    // Only sockets: a duplicate of anything else is opened for nothing.
    std::array<char, 64> link{};
    const std::string path = fmt::format("{}/{}", dir, entry->d_name);
    const ssize_t length = readlink(path.c_str(), link.data(), link.size());
    if (length <= 0 ||
        !std::string_view(link.data(), static_cast<std::size_t>(length))
             .starts_with("socket:"))
      continue;
    const std::string_view name(entry->d_name);
    int fd = -1;
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec !=
        std::errc())
      continue;
    if (auto found = at(tracee, process, fd)) {
      fd_ = fd;
      process_ = process;
      return found;
    }
  }
  return std::nullopt;
}

int unread_bytes(const UniqueFd &socket) { return queued(socket, SIOCINQ); }

int unacknowledged_bytes(const UniqueFd &socket) {
  return queued(socket, SIOCOUTQ);
}

} // namespace cmc::tracer
