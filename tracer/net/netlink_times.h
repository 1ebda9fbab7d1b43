#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tracer/process/process_access.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// The kernel's replies on a NETLINK_ROUTE socket carry its clock and its
// counters: an address's creation and update times (IFA_CACHEINFO's
// cstamp and tstamp, hundredths of a second since boot), a link's traffic
// counters (IFLA_STATS, IFLA_STATS64, IPv6's statistics and its cache
// times in IFLA_AF_SPEC), a route's and a neighbour's last use. They
// differ between network namespaces made at different times, and between
// runs of a target that enumerates its addresses. cmc makes them the same
// in every run: zero.

// Whether socket is a NETLINK_ROUTE socket.
[[nodiscard]] bool is_route_socket(const UniqueFd &socket);

// Zeroes the time stamps and counters of the route netlink messages in
// bytes, in place; a message cut short (MSG_TRUNC) is left as it is from
// the first attribute that does not fit. Returns whether a byte changed.
bool zero_route_times(std::span<std::byte> bytes);

// The same in the target's memory: length bytes at address, and the
// first length bytes of the iovecs of the msghdr at message.
[[nodiscard]] Result<void> zero_route_times_at(ProcessAccess &tracee,
                                               std::uint64_t address,
                                               std::uint64_t length);
[[nodiscard]] Result<void> zero_route_times_in(ProcessAccess &tracee,
                                               std::uint64_t message,
                                               std::uint64_t length);
// The same for the first count messages of the mmsghdr array at messages
// (recvmmsg), each as long as its msg_len.
[[nodiscard]] Result<void> zero_route_times_in_each(ProcessAccess &tracee,
                                                    std::uint64_t messages,
                                                    std::uint64_t count);

} // namespace cmc::tracer
