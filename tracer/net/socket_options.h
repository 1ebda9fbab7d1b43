#pragma once

#include <cstddef>
#include <vector>

#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// The options a server may set on a connected TCP socket, as getsockopt
// reads them (an empty value where the socket has no such option, as
// IP_TOS on an IPv6 one): a re-created connection gets them back
// (tracer/snapshot/saved_connections.h).
struct SocketOptions {
  std::vector<std::vector<std::byte>> values; // in the order of the table
  friend bool operator==(const SocketOptions &,
                         const SocketOptions &) = default;
};

// The options of socket (a duplicate of the target's descriptor: the
// socket is the same).
[[nodiscard]] SocketOptions read_socket_options(const UniqueFd &socket);

// Sets the options of socket that differ from wanted; false when one of
// them does not read back as wanted afterwards.
[[nodiscard]] bool write_socket_options(const UniqueFd &socket,
                                        const SocketOptions &wanted);

} // namespace cmc::tracer
