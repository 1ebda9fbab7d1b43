#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/process_image.h"
#include "util/result.h"

namespace cmc::tracer {

// Which of the target's TCP sockets is which: the port it listens on and
// the port of cmc's end of each client's connection (nothing while the
// client is not connected).
struct SocketOwners {
  std::optional<std::uint16_t> listening_port;
  std::vector<std::optional<std::uint16_t>> client_ports;
};

class Tracee;

// One open descriptor of the target as /proc shows it: its number, its
// /proc/PID/fd link ("socket:[123]", "/dev/null") and its fdinfo text.
struct ProcDescriptor {
  int fd = 0;
  std::string link;
  std::string info;
  friend bool operator==(const ProcDescriptor &,
                         const ProcDescriptor &) = default;
};

// Every open descriptor of the stopped target, by fd.
[[nodiscard]] Result<std::vector<ProcDescriptor>>
list_descriptors(const Tracee &tracee);

// The open descriptors of the target, by fd, as /proc/PID/fd and fdinfo
// show them. A file in workdir (the run's working directory, which differs
// per run) is named "./" and its path in there.
[[nodiscard]] Result<std::vector<decoder::DescriptorImage>>
capture_descriptors(const Tracee &tracee, const SocketOwners &owners,
                    std::string_view workdir);

// The port of an IPv4 or IPv6 address.
[[nodiscard]] std::uint16_t port_of(const sockaddr_storage &address);

// The fields of /proc/PID/fdinfo/FD that are state: "flags" (octal), "pos",
// and each "tfd: FD events: HEX data: HEX" line of an eventpoll as the
// three words (fd, events, data), sorted by fd.
struct FdInfo {
  std::uint32_t flags = 0;
  std::uint64_t position = 0;
  std::vector<std::uint64_t> watches;
};
[[nodiscard]] FdInfo parse_fdinfo(std::string_view text);

// The kind of a descriptor from its /proc/PID/fd link, without what
// differs per run (inode numbers, the run's directory): "socket", "pipe",
// "eventpoll", "/dev/null", "file ./journal", "file /etc/hosts".
[[nodiscard]] std::string descriptor_kind(std::string_view link,
                                          std::string_view workdir);

} // namespace cmc::tracer
