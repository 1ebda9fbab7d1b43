#pragma once

#include <sys/socket.h>

#include <optional>
#include <variant>

#include "tracer/executor.h"
#include "tracer/tracee.h"
#include "util/result.h"

namespace cmc::tracer {

// Drives one traced target from one quiescent point to the next, and learns
// the address it listens on from its own listen().
class Session {
public:
  explicit Session(Tracee &tracee) : tracee_(tracee) {}

  // Runs the target until every thread waits for input that cmc has not
  // sent (it is then stopped on entry to that call), or until it ends.
  // Returns nothing when quiescent, the Fault when it died, exited or hung
  // (step field unset), an Error when it cannot be followed.
  [[nodiscard]] Result<std::optional<Fault>> run_until_quiescent();

  // The TCP address the target listens on, as a client reaches it
  // (a wildcard address becomes loopback). Nothing before listen().
  [[nodiscard]] Result<std::optional<sockaddr_storage>> listen_address() const;

private:
  // True when the stop is quiescent.
  [[nodiscard]] Result<bool> on_seccomp_stop();
  [[nodiscard]] Fault fault_of(const WaitStatus &status) const;

  Tracee &tracee_;
  std::optional<int> listening_fd_;
};

} // namespace cmc::tracer
