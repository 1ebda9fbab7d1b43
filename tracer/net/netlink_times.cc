#include "tracer/net/netlink_times.h"

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <vector>

namespace cmc::tracer {
namespace {

// A byte range of a message: [begin, end).
struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Zeroes length bytes at offset of bytes (within range, else nothing).
bool zero(std::span<std::byte> bytes, Range within, std::size_t offset,
          std::size_t length) {
  if (offset + length > within.end)
    return false;
  const auto part = bytes.subspan(offset, length);
  if (std::ranges::all_of(part, [](std::byte b) { return b == std::byte{}; }))
    return false;
  std::ranges::fill(part, std::byte{});
  return true;
}

// Calls visit(type, payload range) for each attribute (struct rtattr, as
// struct nlattr: the same layout) in range, stopping at one that does not
// fit.
template <typename Visit>
bool each_attribute(std::span<std::byte> bytes, Range range, Visit visit) {
  bool changed = false;
  std::size_t at = range.begin;
  while (at + sizeof(rtattr) <= range.end) {
    rtattr header{};
    std::memcpy(&header, bytes.data() + at, sizeof header);
    if (header.rta_len < sizeof(rtattr) || at + header.rta_len > range.end)
      break;
    const Range payload{at + RTA_LENGTH(0), at + header.rta_len};
    // NLA_F_NESTED and NLA_F_NET_BYTEORDER are flags, not the type.
    changed = visit(header.rta_type & NLA_TYPE_MASK, payload) || changed;
    at += RTA_ALIGN(header.rta_len);
  }
  return changed;
}

// IFLA_AF_SPEC of a link: IPv6's statistics, and its cache times (the
// kernel also draws reachable_time at random).
bool zero_af_spec(std::span<std::byte> bytes, Range range) {
  return each_attribute(bytes, range, [&](unsigned family, Range spec) {
    if (family != AF_INET6)
      return false;
    return each_attribute(bytes, spec, [&](unsigned type, Range payload) {
      switch (type) {
      case IFLA_INET6_STATS:
      case IFLA_INET6_ICMP6STATS:
        return zero(bytes, payload, payload.begin, payload.end - payload.begin);
      case IFLA_INET6_CACHEINFO: {
        const bool stamp = zero(
            bytes, payload, payload.begin + offsetof(ifla_cacheinfo, tstamp),
            sizeof(ifla_cacheinfo::tstamp));
        return zero(bytes, payload,
                    payload.begin + offsetof(ifla_cacheinfo, reachable_time),
                    sizeof(ifla_cacheinfo::reachable_time)) ||
               stamp;
      }
      default:
        return false;
      }
    });
  });
}

bool zero_link(std::span<std::byte> bytes, Range range) {
  return each_attribute(bytes, range, [&](unsigned type, Range payload) {
    switch (type) {
    case IFLA_STATS:
    case IFLA_STATS64:
      return zero(bytes, payload, payload.begin, payload.end - payload.begin);
    case IFLA_AF_SPEC:
      return zero_af_spec(bytes, payload);
    default:
      return false;
    }
  });
}

bool zero_address(std::span<std::byte> bytes, Range range) {
  return each_attribute(bytes, range, [&](unsigned type, Range payload) {
    if (type != IFA_CACHEINFO)
      return false;
    // The lifetimes stay: they say whether the address is permanent.
    const bool created =
        zero(bytes, payload, payload.begin + offsetof(ifa_cacheinfo, cstamp),
             sizeof(ifa_cacheinfo::cstamp));
    return zero(bytes, payload, payload.begin + offsetof(ifa_cacheinfo, tstamp),
                sizeof(ifa_cacheinfo::tstamp)) ||
           created;
  });
}

// A whole attribute of times: a route's RTA_CACHEINFO, a neighbour's
// NDA_CACHEINFO.
bool zero_attribute(std::span<std::byte> bytes, Range range, unsigned wanted) {
  return each_attribute(bytes, range, [&](unsigned type, Range payload) {
    return type == wanted &&
           zero(bytes, payload, payload.begin, payload.end - payload.begin);
  });
}

bool zero_message(std::span<std::byte> bytes, std::uint16_t type, Range body) {
  const auto after = [&](std::size_t header) {
    return Range{std::min(body.begin + NLMSG_ALIGN(header), body.end),
                 body.end};
  };
  switch (type) {
  case RTM_NEWLINK:
    return zero_link(bytes, after(sizeof(ifinfomsg)));
  case RTM_NEWADDR:
    return zero_address(bytes, after(sizeof(ifaddrmsg)));
  case RTM_NEWROUTE:
    return zero_attribute(bytes, after(sizeof(rtmsg)), RTA_CACHEINFO);
  case RTM_NEWNEIGH:
    return zero_attribute(bytes, after(sizeof(ndmsg)), NDA_CACHEINFO);
  default:
    return false;
  }
}

} // namespace

bool is_route_socket(const UniqueFd &socket) {
  int domain = 0;
  int protocol = -1;
  socklen_t length = sizeof domain;
  if (getsockopt(socket.get(), SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0 ||
      domain != AF_NETLINK)
    return false;
  length = sizeof protocol;
  return getsockopt(socket.get(), SOL_SOCKET, SO_PROTOCOL, &protocol,
                    &length) == 0 &&
         protocol == NETLINK_ROUTE;
}

bool zero_route_times(std::span<std::byte> bytes) {
  bool changed = false;
  std::size_t at = 0;
  while (at + sizeof(nlmsghdr) <= bytes.size()) {
    nlmsghdr header{};
    std::memcpy(&header, bytes.data() + at, sizeof header);
    if (header.nlmsg_len < sizeof(nlmsghdr))
      break;
    const Range body{
        at + NLMSG_HDRLEN,
        std::min<std::size_t>(at + header.nlmsg_len, bytes.size())};
    changed = zero_message(bytes, header.nlmsg_type, body) || changed;
    at += NLMSG_ALIGN(header.nlmsg_len);
  }
  return changed;
}

Result<void> zero_route_times_at(ProcessAccess &tracee, std::uint64_t address,
                                 std::uint64_t length) {
  if (length == 0)
    return {};
  std::vector<std::byte> bytes(length);
  const iovec remote{reinterpret_cast<void *>(address), length};
  if (auto read = tracee.read(std::span(&remote, 1), bytes); !read)
    return read.error();
  if (!zero_route_times(bytes))
    return {};
  return tracee.write(address, bytes);
}

Result<void> zero_route_times_in(ProcessAccess &tracee, std::uint64_t message,
                                 std::uint64_t length) {
  auto header = tracee.read(RemotePtr<msghdr>(message));
  if (!header)
    return header.error();
  std::vector<iovec> vectors(
      std::min<std::size_t>(header->msg_iovlen, IOV_MAX));
  const iovec remote{header->msg_iov, vectors.size() * sizeof(iovec)};
  if (auto read = tracee.read(std::span(&remote, 1),
                              std::as_writable_bytes(std::span(vectors)));
      !read)
    return read.error();
  // The message is one stream of bytes across the iovecs, as the kernel
  // wrote it: gathered, rewritten, scattered back.
  std::uint64_t left = length;
  for (iovec &vector : vectors) {
    vector.iov_len = std::min<std::uint64_t>(vector.iov_len, left);
    left -= vector.iov_len;
  }
  std::vector<std::byte> bytes(length - left);
  if (auto read = tracee.read(vectors, bytes); !read)
    return read.error();
  if (!zero_route_times(bytes))
    return {};
  std::size_t at = 0;
  for (const iovec &vector : vectors) {
    const auto part = std::span(bytes).subspan(at, vector.iov_len);
    if (auto written = tracee.write(
            reinterpret_cast<std::uint64_t>(vector.iov_base), part);
        !written)
      return written.error();
    at += vector.iov_len;
  }
  return {};
}

Result<void> zero_route_times_in_each(ProcessAccess &tracee,
                                      std::uint64_t messages,
                                      std::uint64_t count) {
  for (std::uint64_t k = 0; k < count; ++k) {
    // An mmsghdr is a msghdr, then the length received.
    const std::uint64_t at = messages + k * sizeof(mmsghdr);
    auto received = tracee.read(RemotePtr<mmsghdr>(at));
    if (!received)
      return received.error();
    if (auto zeroed = zero_route_times_in(tracee, at, received->msg_len);
        !zeroed)
      return zeroed;
  }
  return {};
}

} // namespace cmc::tracer
