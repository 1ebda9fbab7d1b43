#include "tracer/capture/descriptor_capture.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <memory>

#include <fmt/format.h>

#include "tracer/process/tracee.h"
#include "util/unique_fd.h"

namespace cmc::tracer {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    lines.push_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return lines;
}

// The whitespace-separated fields of a line.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while ((at = line.find_first_not_of(" \t", at)) != std::string_view::npos) {
    const std::size_t end =
        std::min(line.find_first_of(" \t", at), line.size());
    fields.push_back(line.substr(at, end - at));
    at = end;
  }
  return fields;
}

std::uint64_t number(std::string_view text, int base) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value, base);
  return value;
}

// The text of the fdinfo file name in the directory open as directory.
Result<std::string> read_at(int directory, const char *name) {
  const UniqueFd fd(openat(directory, name, O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return proc_error(name, errno);
  // fdinfo is generated whole on open: a read shorter than asked for
  // returned the rest (no second read for the end of file).
  std::string text;
  std::array<char, 4096> buffer{};
  while (true) {
    const ssize_t got = read(fd.get(), buffer.data(), buffer.size());
    if (got < 0)
      return proc_error(name, errno);
    text.append(buffer.data(), static_cast<std::size_t>(got));
    if (static_cast<std::size_t>(got) < buffer.size())
      return text;
  }
}

// The value after "label" among fields, in base.
std::uint64_t field_after(const std::vector<std::string_view> &fields,
                          std::string_view label, int base) {
  for (std::size_t i = 0; i + 1 < fields.size(); ++i)
    if (fields[i] == label)
      return number(fields[i + 1], base);
  return 0;
}

// Which client (or the listening socket) the target's descriptor fd is,
// from the addresses of a duplicate of it. (/proc/PID/net/tcp would tell
// too, but reading it walks the kernel's whole table of TCP connections,
// every namespace's: 1.5 ms.)
int client_of(const Tracee &tracee, int fd, const SocketOwners &owners) {
  constexpr int kOther = decoder::DescriptorImage::kOther;
  const std::optional<UniqueFd> socket = tracee.duplicate_fd(fd);
  int protocol = 0;
  int listening = 0;
  socklen_t size = sizeof protocol;
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (!socket ||
      getsockopt(socket->get(), SOL_SOCKET, SO_PROTOCOL, &protocol, &size) !=
          0 ||
      protocol != IPPROTO_TCP ||
      getsockopt(socket->get(), SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) !=
          0)
    return kOther;
  if (listening != 0)
    return getsockname(socket->get(), reinterpret_cast<sockaddr *>(&address),
                       &length) == 0 &&
                   port_of(address) == owners.listening_port
               ? decoder::DescriptorImage::kListening
               : kOther;
  if (getpeername(socket->get(), reinterpret_cast<sockaddr *>(&address),
                  &length) != 0)
    return kOther;
  for (std::size_t client = 0; client < owners.client_ports.size(); ++client)
    if (owners.client_ports[client] == port_of(address))
      return static_cast<int>(client);
  return kOther;
}

} // namespace

std::uint16_t port_of(const sockaddr_storage &address) {
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6 &>(address).sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in &>(address).sin_port);
}

FdInfo parse_fdinfo(std::string_view text) {
  FdInfo info;
  std::vector<std::array<std::uint64_t, 3>> watches;
  for (const std::string_view line : split_lines(text)) {
    const std::vector<std::string_view> fields = fields_of(line);
    if (fields.size() < 2)
      continue;
    if (fields[0] == "flags:")
      info.flags = static_cast<std::uint32_t>(number(fields[1], 8));
    else if (fields[0] == "pos:")
      info.position = number(fields[1], 10);
    else if (fields[0] == "tfd:")
      watches.push_back({number(fields[1], 10),
                         field_after(fields, "events:", 16),
                         field_after(fields, "data:", 16)});
  }
  std::ranges::sort(watches);
  for (const auto &watch : watches)
    info.watches.insert(info.watches.end(), watch.begin(), watch.end());
  return info;
}

std::string descriptor_kind(std::string_view link, std::string_view workdir) {
  if (link.starts_with("socket:"))
    return "socket";
  if (link.starts_with("pipe:"))
    return "pipe";
  // "anon_inode:[eventpoll]", "anon_inode:inotify".
  constexpr std::string_view kAnon = "anon_inode:";
  if (link.starts_with(kAnon)) {
    std::string_view kind = link.substr(kAnon.size());
    if (kind.starts_with('[') && kind.ends_with(']'))
      kind = kind.substr(1, kind.size() - 2);
    return std::string(kind);
  }
  if (link.starts_with("/dev/"))
    return std::string(link);
  if (!workdir.empty() && link.starts_with(workdir) &&
      (link.size() == workdir.size() || link[workdir.size()] == '/'))
    return fmt::format("file .{}", link.substr(workdir.size()));
  return fmt::format("file {}", link);
}

Result<std::vector<ProcDescriptor>> list_descriptors(const Tracee &tracee) {
  // Names are looked up relative to the two directories: a path from /proc
  // on costs a lookup of the process each time.
  const std::string fd_path = fmt::format("/proc/{}/fd", tracee.process());
  const std::unique_ptr<DIR, int (*)(DIR *)> listing(opendir(fd_path.c_str()),
                                                     closedir);
  const std::string info_path =
      fmt::format("/proc/{}/fdinfo", tracee.process());
  const UniqueFd infos(
      open(info_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing || !infos.valid())
    return proc_error("cannot open " + fd_path, errno);
  std::vector<ProcDescriptor> descriptors;
  std::array<char, 4096> link{};
  while (const dirent *entry = readdir(listing.get())) {
    if (entry->d_name[0] == '.')
      continue;
    const ssize_t length = readlinkat(dirfd(listing.get()), entry->d_name,
                                      link.data(), link.size());
    if (length < 0)
      return proc_error(
          fmt::format("cannot read descriptor {} of the target", entry->d_name),
          errno);
    auto info = read_at(infos.get(), entry->d_name);
    if (!info)
      return info.error().after(
          fmt::format("cannot read the fdinfo of descriptor {} of the "
                      "target: ",
                      entry->d_name));
    descriptors.push_back(
        {static_cast<int>(number(entry->d_name, 10)),
         std::string(link.data(), static_cast<std::size_t>(length)),
         std::move(*info)});
  }
  std::ranges::sort(descriptors, {}, &ProcDescriptor::fd);
  return descriptors;
}

Result<std::vector<decoder::DescriptorImage>>
capture_descriptors(const Tracee &tracee, const SocketOwners &owners,
                    std::string_view workdir) {
  auto listed = list_descriptors(tracee);
  if (!listed)
    return listed.error();
  std::vector<decoder::DescriptorImage> descriptors;
  for (const ProcDescriptor &entry : *listed) {
    FdInfo fields = parse_fdinfo(entry.info);
    decoder::DescriptorImage descriptor;
    descriptor.fd = entry.fd;
    descriptor.kind = descriptor_kind(entry.link, workdir);
    descriptor.flags = fields.flags;
    descriptor.position = fields.position;
    descriptor.watches = std::move(fields.watches);
    if (descriptor.kind == "socket")
      descriptor.client = client_of(tracee, descriptor.fd, owners);
    descriptors.push_back(std::move(descriptor));
  }
  return descriptors;
}

} // namespace cmc::tracer
