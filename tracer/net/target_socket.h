#pragma once

#include <sys/socket.h>

#include <optional>

#include "tracer/process/tracee.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// The target's end of one of cmc's connections, found by its peer address
// (cmc's end), duplicated from the target (pidfd_getfd). The duplicate
// must be closed before the target runs again: while it is open, a close()
// in the target does not close the connection.
class TargetSocket {
public:
  explicit TargetSocket(const sockaddr_storage &peer) : peer_(peer) {}

  // The target's end now; nothing when it has none (not accepted yet, or
  // closed). Looks at the descriptor found last time first, then at all,
  // of each process of the target's (in whichever holds it).
  [[nodiscard]] std::optional<UniqueFd> find(const Tracee &tracee);
  // The target's descriptor number of the end find() found last, and the
  // process that has it.
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] pid_t process() const { return process_; }

private:
  [[nodiscard]] std::optional<UniqueFd> at(const Tracee &tracee, pid_t process,
                                           int fd) const;
  [[nodiscard]] std::optional<UniqueFd> search(const Tracee &tracee,
                                               pid_t process);

  sockaddr_storage peer_;
  int fd_ = -1; // the target's descriptor number found last
  pid_t process_ = 0;
};

// Bytes in a socket's queues: SIOCINQ, received and not read yet;
// SIOCOUTQ, written and not acknowledged by the peer yet.
[[nodiscard]] int unread_bytes(const UniqueFd &socket);
[[nodiscard]] int unacknowledged_bytes(const UniqueFd &socket);

} // namespace cmc::tracer
