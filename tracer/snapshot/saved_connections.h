#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tracer/capture/descriptor_capture.h"
#include "tracer/control/target_run.h"
#include "tracer/net/socket_options.h"
#include "util/result.h"

namespace cmc::tracer {

// One client's connection open at a quiescent point, as far as the target
// can tell it from another: cmc's port (its peer address, which the
// target may keep in memory), the descriptor number of its end, that
// descriptor's flags, the epoll registrations naming it and the socket's
// options. The connection was idle (TargetRun::connections_idle): nothing
// else of it (its queues, sequence numbers) shows to the target.
struct SavedConnection {
  std::size_t client = 0;
  std::uint16_t port = 0;
  int fd = -1;
  std::uint32_t flags = 0; // fdinfo's: O_RDWR, O_NONBLOCK, O_CLOEXEC
  struct Watch {
    int epoll = -1;
    std::uint32_t events = 0;
    std::uint64_t data = 0;
  };
  std::vector<Watch> watches;
  SocketOptions options;
};

// The clients' connections of a quiescent target and what cmc keeps of
// them, saved with a Snapshot: restore() makes the live target's
// connections those again, dropping the ones the saved state did not have
// and re-creating the ones it had and the target has not now, with calls
// made in the target (close, accept4, dup3, epoll_ctl) and the options set
// through a duplicate of its end.
class SavedConnections {
public:
  // Saves run's connections; descriptors are the target's now
  // (list_descriptors). Refused, with the reason in refused, when one
  // could not be re-created faithfully: "connection state" (not accepted
  // yet, at several descriptor numbers, with flags other than O_NONBLOCK
  // and O_CLOEXEC), "epoll registration" (one-shot or exclusive, or
  // edge-triggered for output: the edge a re-created socket would raise
  // need not be the one the target saw).
  [[nodiscard]] static Result<std::optional<SavedConnections>>
  save(TargetRun &run, std::span<const ProcDescriptor> descriptors,
       std::string &refused);

  // Makes run's connections these, its target (one thread, quiescent)
  // stopped where it waits. scratch is the address of 12 bytes of the
  // target's writable memory that the caller puts back afterwards (for
  // epoll_ctl's argument). Returns "" when it did, else why not
  // ("connection state": a connection not accepted yet, a descriptor
  // number taken, an option that does not take); the target is then in no
  // known state.
  [[nodiscard]] Result<std::string> restore(TargetRun &run,
                                            std::uint64_t scratch) const;

private:
  [[nodiscard]] Result<std::string> reconnect(TargetRun &run,
                                              std::uint64_t scratch) const;

  std::vector<SavedConnection> open_;
  TargetRun::Clients clients_;
};

// The inode of the target's end of each of run's open connections, and
// its client.
[[nodiscard]] Result<std::map<std::uint64_t, std::size_t>>
connection_inodes(TargetRun &run);

// descriptors with the connections' inodes (of inodes) named by their
// client instead, in the link, fdinfo's ino line and epoll's tfd lines,
// and epoll's tfd lines sorted (the kernel lists them by the address of
// each file): a re-created connection then compares equal to the one
// saved, the same kind at the same number with the same flags.
[[nodiscard]] std::vector<ProcDescriptor>
without_connection_inodes(std::vector<ProcDescriptor> descriptors,
                          const std::map<std::uint64_t, std::size_t> &inodes);

} // namespace cmc::tracer
