#include "tracer/descriptor_capture.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "tracer/tracee.h"

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

// The port of "0100007F:2C71" (hex address, colon, hex port).
std::uint16_t port_of(std::string_view address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos)
    return 0;
  return static_cast<std::uint16_t>(number(address.substr(colon + 1), 16));
}

// The value after "label" among fields, in base.
std::uint64_t field_after(const std::vector<std::string_view> &fields,
                          std::string_view label, int base) {
  for (std::size_t i = 0; i + 1 < fields.size(); ++i)
    if (fields[i] == label)
      return number(fields[i + 1], base);
  return 0;
}

// The inode of a "socket:[12345]" link, 0 for other links.
std::uint64_t socket_inode(std::string_view link) {
  constexpr std::string_view kPrefix = "socket:[";
  if (!link.starts_with(kPrefix))
    return 0;
  return number(link.substr(kPrefix.size()), 10);
}

// Which client (or the listening socket) a TCP socket of the target is.
int client_of(const TcpSocket &socket, const SocketOwners &owners) {
  if (socket.listening)
    return socket.local_port == owners.listening_port
               ? decoder::DescriptorImage::kListening
               : decoder::DescriptorImage::kOther;
  for (std::size_t client = 0; client < owners.client_ports.size(); ++client)
    if (owners.client_ports[client] == socket.remote_port)
      return static_cast<int>(client);
  return decoder::DescriptorImage::kOther;
}

// The target's TCP sockets by inode; both files are read only when it has
// a socket at all.
Result<std::map<std::uint64_t, TcpSocket>> tcp_sockets(const Tracee &tracee) {
  std::map<std::uint64_t, TcpSocket> sockets;
  for (const char *leaf : {"net/tcp", "net/tcp6"}) {
    auto text = tracee.proc_file(leaf);
    if (!text)
      return text.error();
    for (const TcpSocket &socket : parse_net_tcp(*text))
      sockets[socket.inode] = socket;
  }
  return sockets;
}

} // namespace

std::vector<TcpSocket> parse_net_tcp(std::string_view text) {
  // "sl local_address rem_address st ... uid timeout inode"; st 0A is
  // TCP_LISTEN.
  constexpr std::size_t kInode = 9;
  std::vector<TcpSocket> sockets;
  for (const std::string_view line : split_lines(text)) {
    const std::vector<std::string_view> fields = fields_of(line);
    if (fields.size() <= kInode || !fields[0].ends_with(':'))
      continue; // the header
    sockets.push_back({number(fields[kInode], 10), port_of(fields[1]),
                       port_of(fields[2]), fields[3] == "0A"});
  }
  return sockets;
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

Result<std::vector<decoder::DescriptorImage>>
capture_descriptors(const Tracee &tracee, const SocketOwners &owners,
                    std::string_view workdir) {
  const std::string directory = fmt::format("/proc/{}/fd", tracee.pid());
  std::error_code error;
  std::vector<decoder::DescriptorImage> descriptors;
  std::optional<std::map<std::uint64_t, TcpSocket>> sockets;
  for (const auto &entry :
       std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename();
    const std::filesystem::path link =
        std::filesystem::read_symlink(entry.path(), error);
    if (error)
      return Error{fmt::format("cannot read the link {}: {}",
                               entry.path().string(), error.message())};
    auto info = tracee.proc_file(fmt::format("fdinfo/{}", name).c_str());
    if (!info)
      return info.error();
    FdInfo fields = parse_fdinfo(*info);
    decoder::DescriptorImage descriptor;
    descriptor.fd = static_cast<int>(number(name, 10));
    descriptor.kind = descriptor_kind(link.native(), workdir);
    descriptor.flags = fields.flags;
    descriptor.position = fields.position;
    descriptor.watches = std::move(fields.watches);
    if (const std::uint64_t inode = socket_inode(link.native())) {
      if (!sockets) {
        auto read = tcp_sockets(tracee);
        if (!read)
          return read.error();
        sockets = std::move(*read);
      }
      if (auto found = sockets->find(inode); found != sockets->end())
        descriptor.client = client_of(found->second, owners);
    }
    descriptors.push_back(std::move(descriptor));
  }
  if (error)
    return Error{fmt::format("cannot list {}: {}", directory, error.message())};
  std::ranges::sort(descriptors, {}, &decoder::DescriptorImage::fd);
  return descriptors;
}

} // namespace cmc::tracer
