#pragma once

#include <sys/socket.h>

#include <cstdint>

#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// One end of a TCP connection as its kernel sees it. What happens to an
// end happens at once; telling the peer (data, a FIN, a reset) crosses
// loopback in a softirq that the kernel may run later (in ksoftirqd, on a
// loaded machine), so the peer's own socket may not show it yet.
struct TcpEnd {
  // Its owner has closed it, shut it down for writing, or reset it.
  bool closed = false;
  // The bytes it has received in order, read by its owner or not.
  std::uint64_t received = 0;
  // Of those, the bytes its owner has not read yet (its receive queue).
  std::uint32_t unread = 0;
};

// A NETLINK_SOCK_DIAG socket of the network namespace netns (an fd of
// /proc/PID/ns/net), to ask about the connections there.
[[nodiscard]] Result<UniqueFd> open_socket_diag(int netns);

// The end at `at` of the TCP connection between `at` and `peer`, asked
// on diag.
[[nodiscard]] Result<TcpEnd> tcp_end(const UniqueFd &diag,
                                     const sockaddr_storage &at,
                                     const sockaddr_storage &peer);

} // namespace cmc::tracer
