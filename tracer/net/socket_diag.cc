#include "tracer/net/socket_diag.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "tracer/sandbox/network_namespace.h"

namespace cmc::tracer {
namespace {

// The kernel's TCP states (include/net/tcp_states.h) of an end its owner
// has not closed: connected (or waiting to be accepted), not yet
// connected (the handshake's last ACK not handled), closed by the peer.
constexpr int kEstablished = 1;
constexpr int kSynReceived = 3;
constexpr int kCloseWait = 8;

struct Request {
  nlmsghdr header;
  inet_diag_req_v2 body;
};

// The port and address of address, into a socket id's (the address as
// the four words of an IPv6 one, or the first of them).
void put(const sockaddr_storage &address, __be16 &port, void *words) {
  if (address.ss_family == AF_INET6) {
    const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(address);
    port = in6.sin6_port;
    std::memcpy(words, &in6.sin6_addr, sizeof in6.sin6_addr);
  } else {
    const auto &in4 = reinterpret_cast<const sockaddr_in &>(address);
    port = in4.sin_port;
    std::memcpy(words, &in4.sin_addr, sizeof in4.sin_addr);
  }
}

Request request_for(const sockaddr_storage &at, const sockaddr_storage &peer) {
  Request request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.body.sdiag_family = static_cast<__u8>(at.ss_family);
  request.body.sdiag_protocol = IPPROTO_TCP;
  request.body.idiag_ext = 1U << (INET_DIAG_INFO - 1);
  request.body.idiag_states = ~0U;
  request.body.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  request.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  put(at, request.body.id.idiag_sport, request.body.id.idiag_src);
  put(peer, request.body.id.idiag_dport, request.body.id.idiag_dst);
  return request;
}

// The end an answer describes; its tcp_info is there only for a full
// socket (not one still in the handshake, nor a TIME_WAIT one).
TcpEnd end_of(const nlmsghdr &header) {
  const auto *found = static_cast<const inet_diag_msg *>(NLMSG_DATA(&header));
  const int state = found->idiag_state;
  const bool open =
      state == kEstablished || state == kSynReceived || state == kCloseWait;
  // A listening socket's queue is its backlog, not bytes.
  TcpEnd end{!open, 0, open ? found->idiag_rqueue : 0};
  auto left =
      static_cast<int>(header.nlmsg_len - NLMSG_LENGTH(sizeof(inet_diag_msg)));
  for (const auto *attribute = reinterpret_cast<const rtattr *>(found + 1);
       RTA_OK(attribute, left); attribute = RTA_NEXT(attribute, left)) {
    tcp_info info{};
    if (attribute->rta_type != INET_DIAG_INFO)
      continue;
    std::memcpy(&info, RTA_DATA(attribute),
                std::min(sizeof info,
                         static_cast<std::size_t>(RTA_PAYLOAD(attribute))));
    end.received = info.tcpi_bytes_received;
  }
  return end;
}

} // namespace

Result<UniqueFd> open_socket_diag(int netns) {
  auto diag = socket_in(netns, AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
  if (!diag)
    return Error{"cannot open a socket to ask the kernel about connections: " +
                 diag.error().message};
  return diag;
}

Result<TcpEnd> tcp_end(const UniqueFd &diag, const sockaddr_storage &at,
                       const sockaddr_storage &peer) {
  const Request request = request_for(at, peer);
  if (send(diag.get(), &request, sizeof request, 0) !=
      static_cast<ssize_t>(sizeof request))
    return system_error("cannot ask the kernel about a connection", errno);
  alignas(nlmsghdr) std::array<char, 4096> reply{};
  const ssize_t length = recv(diag.get(), reply.data(), reply.size(), 0);
  const auto *header = reinterpret_cast<const nlmsghdr *>(reply.data());
  if (length < 0 || !NLMSG_OK(header, static_cast<std::size_t>(length)))
    return Error{"the kernel's answer about a connection is unreadable"};
  if (header->nlmsg_type != NLMSG_ERROR)
    // Without an end of this connection, the lookup falls back to the
    // socket listening at `at` (TCP_LISTEN): closed as well.
    return end_of(*header);
  const auto *error = static_cast<const nlmsgerr *>(NLMSG_DATA(header));
  // The owner reset the connection: its end is gone at once.
  if (error->error == -ENOENT)
    return TcpEnd{true, 0, 0};
  return system_error("cannot ask the kernel about a connection",
                      -error->error);
}

} // namespace cmc::tracer
