#include "tracer/net/socket_options.h"

#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <cstring>

namespace cmc::tracer {
namespace {

struct Option {
  int level;
  int name;
  // The option that sets it, when it is not name: a buffer size reads
  // back doubled (the kernel's bookkeeping overhead) and is set halved,
  // with the FORCE variant, which rmem_max and wmem_max do not cap (cmc
  // may, the target may have).
  int set_name;
};

constexpr std::array kOptions{
    Option{SOL_SOCKET, SO_KEEPALIVE, SO_KEEPALIVE},
    Option{SOL_SOCKET, SO_LINGER, SO_LINGER},
    Option{SOL_SOCKET, SO_RCVBUF, SO_RCVBUFFORCE},
    Option{SOL_SOCKET, SO_SNDBUF, SO_SNDBUFFORCE},
    Option{SOL_SOCKET, SO_RCVLOWAT, SO_RCVLOWAT},
    Option{SOL_SOCKET, SO_RCVTIMEO, SO_RCVTIMEO},
    Option{SOL_SOCKET, SO_SNDTIMEO, SO_SNDTIMEO},
    Option{SOL_SOCKET, SO_OOBINLINE, SO_OOBINLINE},
    Option{SOL_SOCKET, SO_PRIORITY, SO_PRIORITY},
    Option{IPPROTO_TCP, TCP_NODELAY, TCP_NODELAY},
    Option{IPPROTO_TCP, TCP_CORK, TCP_CORK},
    Option{IPPROTO_TCP, TCP_KEEPIDLE, TCP_KEEPIDLE},
    Option{IPPROTO_TCP, TCP_KEEPINTVL, TCP_KEEPINTVL},
    Option{IPPROTO_TCP, TCP_KEEPCNT, TCP_KEEPCNT},
    Option{IPPROTO_TCP, TCP_USER_TIMEOUT, TCP_USER_TIMEOUT},
    Option{IPPROTO_IP, IP_TOS, IP_TOS},
    Option{IPPROTO_IPV6, IPV6_TCLASS, IPV6_TCLASS},
};

std::vector<std::byte> read_option(const UniqueFd &socket,
                                   const Option &option) {
  std::array<std::byte, 32> value{}; // the largest is a timeval
  socklen_t length = value.size();
  if (getsockopt(socket.get(), option.level, option.name, value.data(),
                 &length) != 0)
    return {};
  return {value.begin(), value.begin() + length};
}

} // namespace

SocketOptions read_socket_options(const UniqueFd &socket) {
  SocketOptions options;
  for (const Option &option : kOptions)
    options.values.push_back(read_option(socket, option));
  return options;
}

bool write_socket_options(const UniqueFd &socket, const SocketOptions &wanted) {
  for (std::size_t i = 0; i < kOptions.size(); ++i) {
    const Option &option = kOptions[i];
    std::vector<std::byte> value = wanted.values.at(i);
    if (read_option(socket, option) == value)
      continue;
    if (option.set_name != option.name && value.size() == sizeof(int)) {
      int size = 0;
      std::memcpy(&size, value.data(), sizeof size);
      size /= 2;
      std::memcpy(value.data(), &size, sizeof size);
    }
    if (value.empty() ||
        setsockopt(socket.get(), option.level, option.set_name, value.data(),
                   static_cast<socklen_t>(value.size())) != 0 ||
        read_option(socket, option) != wanted.values[i])
      return false;
  }
  return true;
}

} // namespace cmc::tracer
