#include "tracer/net/connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "tracer/net/socket_diag.h"
#include "tracer/sandbox/network_namespace.h"

namespace cmc::tracer {
namespace {

socklen_t address_length(const sockaddr_storage &address) {
  return address.ss_family == AF_INET6 ? sizeof(sockaddr_in6)
                                       : sizeof(sockaddr_in);
}

// Binds sock to the loopback address of address's family, at port.
Result<void> bind_loopback(const UniqueFd &sock,
                           const sockaddr_storage &address,
                           std::uint16_t port) {
  sockaddr_storage local{};
  local.ss_family = address.ss_family;
  if (address.ss_family == AF_INET6) {
    auto &in6 = reinterpret_cast<sockaddr_in6 &>(local);
    in6.sin6_addr = in6addr_loopback;
    in6.sin6_port = htons(port);
  } else {
    auto &in4 = reinterpret_cast<sockaddr_in &>(local);
    in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    in4.sin_port = htons(port);
  }
  // A socket of an earlier run may still hold the port while it closes.
  const int on = 1;
  setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (bind(sock.get(), reinterpret_cast<const sockaddr *>(&local),
           address_length(local)) != 0)
    return system_error(
        fmt::format("cannot bind cmc's end of a connection to {}",
                    describe_address(local)),
        errno);
  return {};
}

} // namespace

std::optional<std::uint16_t> nth_client_port(std::size_t n) {
  constexpr std::size_t kFirst = 61000;
  if (n > 65535 - kFirst)
    return std::nullopt;
  return static_cast<std::uint16_t>(kFirst + n);
}

Result<Connection> Connection::open(int netns, const sockaddr_storage &address,
                                    std::uint16_t local_port) {
  auto sock = socket_in(netns, address.ss_family, SOCK_STREAM);
  if (!sock)
    return sock.error();
  if (auto bound = bind_loopback(*sock, address, local_port); !bound)
    return bound.error();
  // On loopback the handshake completes inside connect(), before the target
  // has called accept: the connection waits in its backlog.
  // No Nagle: a message sent while the last one is still unacknowledged
  // (the target did not reply, so its ACK is delayed) leaves at once.
  const int on = 1;
  setsockopt(sock->get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  if (connect(sock->get(), reinterpret_cast<const sockaddr *>(&address),
              address_length(address)) != 0)
    return system_error(fmt::format("cannot connect to the target at {}",
                                    describe_address(address)),
                        errno);
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (getsockname(sock->get(), reinterpret_cast<sockaddr *>(&local), &length) !=
      0)
    return system_error("getsockname", errno);
  // The target's end: address, or where a wildcard address led (loopback).
  sockaddr_storage remote{};
  length = sizeof remote;
  if (getpeername(sock->get(), reinterpret_cast<sockaddr *>(&remote),
                  &length) != 0)
    return system_error("getpeername", errno);
  auto diag = open_socket_diag(netns);
  if (!diag)
    return diag.error();
  // cmc's own end, just connected, must be known: a kernel without
  // tcp_diag knows no connection at all.
  auto own = tcp_end(*diag, local, remote);
  if (!own)
    return own.error();
  if (own->closed)
    return Error{"the kernel does not describe TCP connections (sock_diag; "
                 "is the tcp_diag module missing?): cmc cannot tell when a "
                 "message has reached the target"};
  return Connection(std::move(*sock), std::move(*diag), local, remote);
}

Connection::~Connection() {
  if (!socket_.valid())
    return;
  // Close with a reset, not a FIN: neither end keeps a TIME_WAIT socket in
  // the namespace that the next target of this worker joins.
  const linger reset{1, 0};
  setsockopt(socket_.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  // And reset now: a child another worker is spawning may hold a copy of
  // this descriptor until it closes what it inherited, and the close
  // alone would not reset the connection before that copy is gone, so
  // the next run's connection from the same port (nth_client_port) would
  // find it still there (EADDRNOTAVAIL). connect(AF_UNSPEC) disconnects
  // the socket itself, whoever holds it.
  sockaddr unspecified{};
  unspecified.sa_family = AF_UNSPEC;
  [[maybe_unused]] const int disconnected =
      connect(socket_.get(), &unspecified, sizeof unspecified);
}

void Connection::close() { shutdown(socket_.get(), SHUT_WR); }

Result<void> Connection::send(std::string_view bytes,
                              std::chrono::steady_clock::time_point end) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(socket_.get(), bytes.data(), bytes.size(),
                                MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      // The target closed its end: the message is lost, as it would be for
      // a real client; the step still ends when the target is quiescent.
      if (errno == EPIPE || errno == ECONNRESET)
        return {};
      return system_error("cannot send to the target", errno);
    }
    sent_ += static_cast<std::uint64_t>(sent);
    unread_.append(bytes.substr(0, static_cast<std::size_t>(sent)));
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  // SIOCOUTQNSD counts bytes not yet handed on to loopback.
  int unsent = 0;
  if (ioctl(socket_.get(), SIOCOUTQNSD, &unsent) == 0 && unsent != 0)
    return Error{fmt::format("{} bytes of the message are still unsent (is "
                             "the target's receive buffer full?)",
                             unsent)};
  // Handed on is not arrived (socket_diag.h): no event tells when the
  // softirq that carries them has run, so cmc asks until it has.
  while (true) {
    auto target = tcp_end(diag_, remote_, local_);
    if (!target)
      return target.error();
    if (target->closed || target->received >= sent_)
      return {};
    if (std::chrono::steady_clock::now() >= end)
      return Error{fmt::format("{} bytes of the message did not reach the "
                               "target within the step timeout",
                               sent_ - target->received)};
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Result<bool> Connection::target_closed() const {
  auto target = tcp_end(diag_, remote_, local_);
  if (!target)
    return target.error();
  return target->closed;
}

Result<std::string> Connection::unread() {
  auto target = tcp_end(diag_, remote_, local_);
  if (!target)
    return target.error();
  return unread(target->unread);
}

std::string Connection::unread(std::size_t waiting) {
  unread_.erase(0, unread_.size() - std::min(waiting, unread_.size()));
  return unread_;
}

bool Connection::receive() {
  std::array<char, 4096> buffer{};
  while (true) {
    const ssize_t got =
        recv(socket_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got > 0) {
      received_.append(buffer.data(), static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0 && errno == ECONNRESET)
      reset_ = true;
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

void Connection::acknowledge() {
  // Setting TCP_QUICKACK sends an ACK that is due at once; the option
  // itself lasts only until the kernel leaves quick-ACK mode again.
  const int on = 1;
  setsockopt(socket_.get(), IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
}

void Connection::wait(std::chrono::milliseconds timeout) const {
  pollfd entry{socket_.get(), POLLIN | POLLRDHUP, 0};
  poll(&entry, 1, static_cast<int>(timeout.count()));
}

std::string Connection::drain() {
  receive();
  return std::exchange(received_, {});
}

std::string describe_address(const sockaddr_storage &address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (address.ss_family == AF_INET6) {
    const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(address);
    inet_ntop(AF_INET6, &in6.sin6_addr, text.data(), text.size());
    return fmt::format("[{}]:{}", text.data(), ntohs(in6.sin6_port));
  }
  const auto &in4 = reinterpret_cast<const sockaddr_in &>(address);
  inet_ntop(AF_INET, &in4.sin_addr, text.data(), text.size());
  return fmt::format("{}:{}", text.data(), ntohs(in4.sin_port));
}

} // namespace cmc::tracer
