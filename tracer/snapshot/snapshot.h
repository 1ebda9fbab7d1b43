#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "tracer/capture/descriptor_capture.h"
#include "tracer/capture/saved_pages.h"
#include "tracer/control/session.h"
#include "tracer/control/target_run.h"
#include "tracer/snapshot/saved_connections.h"
#include "util/result.h"

namespace cmc::tracer {

// A quiescent state of a live target, saved so that the same target can
// be put back into it in place after it took other steps: its memory and
// registers, and the state cmc keeps of it (the session: virtual clock,
// threads, timers; its output). Only what cmc can put back is saved; the
// rest must not have changed in between, and restore() checks that it has
// not (the mappings, the descriptors and what /proc shows of them, the
// signal state, the umask, the files it wrote, the connections' queues,
// the calls of syscall_table.h whose effect cannot be undone: signal
// handlers, working directory, limits) or refuses. The clients'
// connections are put back too: the ones opened since are closed, the
// ones closed since are opened again (SavedConnections).
class Snapshot {
public:
  // Saves run's target, stopped at a quiescent point. A state that could
  // not be put back faithfully is refused: nothing, and refused names why
  // ("threads", "descriptor kind", "socket queue", "shared mapping",
  // "connection state", "epoll registration").
  [[nodiscard]] static Result<std::optional<Snapshot>>
  save(TargetRun &run, std::string &refused);

  // Puts run's target (the one saved, quiescent again) back into this
  // state. Returns "" when it did, else why it did not ("calls",
  // "threads", "mappings", "connection state", "socket queue",
  // "descriptors", "signals", "umask", "files", "unsaved page"); the
  // target is then in no known state (a refusal found after changing its
  // connections or memory) and must not be used again.
  [[nodiscard]] Result<std::string> restore(TargetRun &run) const;

  // The bytes it holds.
  [[nodiscard]] std::size_t size() const;

private:
  // What the kernel keeps of the target outside its memory and registers,
  // as /proc shows it, for restore() to compare.
  struct Outside {
    // By number; the connections' sockets named by client
    // (without_connection_inodes).
    std::vector<ProcDescriptor> descriptors;
    std::string signals; // the Sig* and ShdPnd lines of status
    std::string umask;
    friend bool operator==(const Outside &, const Outside &) = default;
  };
  Snapshot() = default;
  [[nodiscard]] static Result<Outside> outside(TargetRun &run);

  SavedPages pages_;
  Outside outside_;
  Session::Saved session_;
  TargetOutput output_;
  std::vector<executor::FileDigest> files_;
  SavedConnections connections_;
  std::size_t unrestorable_calls_ = 0; // Session::unrestorable_calls
};

} // namespace cmc::tracer
