#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "decoder/canonical_state.h"
#include "executor/frame.h"
#include "executor/sources.h"
#include "util/fingerprint.h"
#include "util/result.h"

namespace cmc::executor {

// Index of one step of the alphabet: the client messages in order, then the
// clock tick when the search has one.
using ActionId = std::uint16_t;

// The most switches away from a running thread that one step may make
// (--preemptions).
inline constexpr std::size_t kMaxPreemptions = 4;

// One step of a path: an action of the alphabet, and where inside it cmc's
// scheduler switches away from the thread that runs (CHESS's preemptions).
// The step's preemption points are the system calls at which the running
// thread stops while another thread could run, numbered from 1 in the order
// the run meets them; preempt_at lists those it switches at, ascending, 0
// ending the list. A step of --preemptions 0 has none.
struct PathStep {
  ActionId action = 0;
  std::array<std::uint32_t, kMaxPreemptions> preempt_at{};

  PathStep() = default;
  // The action with no preemption.
  constexpr PathStep(ActionId action) : action(action) {}

  [[nodiscard]] std::size_t preemptions() const {
    return static_cast<std::size_t>(
        std::ranges::find(preempt_at, std::uint32_t{0}) - preempt_at.begin());
  }
  [[nodiscard]] std::span<const std::uint32_t> points() const {
    return std::span(preempt_at).first(preemptions());
  }
  // The step with one more preemption, at point (after every one it has).
  [[nodiscard]] PathStep preempted_at(std::uint32_t point) const {
    PathStep more = *this;
    more.preempt_at.at(preemptions()) = point;
    return more;
  }
  friend bool operator==(const PathStep &, const PathStep &) = default;
  // Spelled out: clang-tidy 14 reads the 0 in the expansion of a defaulted
  // <=> as a null pointer (modernize-use-nullptr).
  friend bool operator<(const PathStep &a, const PathStep &b) {
    return std::tie(a.action, a.preempt_at) < std::tie(b.action, b.preempt_at);
  }
};

// The actions of a path as numbers, for messages about it: "0, 1
// preempted at 3".
[[nodiscard]] std::string describe_path(std::span<const PathStep> path);

// How the target failed while a step was in flight.
struct Fault {
  enum class Kind { kSignal, kExit, kHang, kDeadlock };
  Kind kind = Kind::kSignal;
  int code = 0; // signal number or exit status; unused for kHang, kDeadlock
  std::size_t step = 0; // index in the path of the step in flight
  // The last line the target wrote (escaped, cut short), "" if none or
  // when its output went to the terminal (--show-output).
  // (Initialised, as every member, so that designated initializers may
  // leave them out without GCC's -Wmissing-field-initializers.)
  std::string last_output{};
  // How many bytes it wrote to stdout and stderr, and how many of them
  // cmc did not keep (it keeps the first and last few KiB).
  std::uint64_t output_written = 0;
  std::uint64_t output_dropped = 0;
  // Killed by a signal the target raised (a crash): the stack of the
  // thread it hit, innermost first, as it was delivered; else empty.
  std::vector<Frame> backtrace{};

  // "killed by SIGSEGV", "exited with status 1", "hung (no quiescence ...)".
  [[nodiscard]] std::string describe() const;
  // The violation it is: 'target killed by SIGSEGV during step 2; it last
  // wrote "..."'.
  [[nodiscard]] std::string violation() const;
};

// Of what a target writes to its stdout and stderr in a run, cmc keeps the
// first and the last kOutputKept bytes.
inline constexpr std::size_t kOutputKept = 4096;

// " (N of the M bytes it wrote were not kept: cmc keeps the first and
// last 4 KiB)" when dropped, else "".
[[nodiscard]] std::string output_not_kept(std::uint64_t written,
                                          std::uint64_t dropped);

// What a step did to the connections, besides changing the state and
// bringing replies.
struct StepEffects {
  // For a message: its length, and how many of its bytes the target had
  // read when the step ended (nothing: it closed the connection with bytes
  // unread, so how many were the message's is not known).
  std::optional<std::size_t> length;
  std::optional<std::size_t> read;
  // The clients whose connection the target closed during the step, and
  // those of them it closed with bytes it never read (the kernel then
  // resets the connection and drops them).
  std::vector<std::size_t> closed;
  std::vector<std::size_t> dropped;
  // The calls the target's threads waited in when the step ended
  // ("epoll_wait"), "" when they ran to their end.
  std::string waits_in;
  // How many preemption points the step passed (PathStep), and the
  // switches it made at those of its preempt_at, in order ("thread 2
  // before write, thread 3 ran").
  std::uint32_t preemption_points = 0;
  std::vector<std::string> preempted;

  [[nodiscard]] bool read_whole() const {
    return length && read && *read == *length;
  }
  // Known to have left some of its message unread (a step that faulted
  // is not known to have).
  [[nodiscard]] bool read_short() const {
    return length && (read ? *read != *length : !dropped.empty());
  }
};

// A file or directory tree the target wrote, by the name it has for it
// ("./journal", "/var/lib/x"), and the hash of its names, types, modes,
// sizes and contents.
struct FileDigest {
  std::string name;
  std::uint64_t hash = 0;
  friend bool operator==(const FileDigest &, const FileDigest &) = default;
};

// What a state is, for dedup (TargetSpec::state).
enum class StateKind {
  kProcess, // the whole process, with a canonical glibc heap (default)
  kRaw,     // the whole process, every byte as read
  kRegions, // the declared regions (--region), audited
  // Each path is its own state: nothing is read to tell states apart and
  // nothing merges (for a target whose state cmc cannot read the same way
  // twice: threads that map memory in the order the scheduler decides).
  kPath,
};

// An entry of Observation::fingerprints for a state that was not read.
inline constexpr Fingerprint kNotRead{};

// What one replay of a path showed.
struct Observation {
  // fingerprints[i] is the state after i steps; [0] is the initial state.
  // With a fault at step k it holds the k+1 states reached before it.
  // A whole-process state (StateKind::kProcess, kRaw) costs a capture:
  // unless images are kept, only the last state and the one before it
  // (the state the last step starts from) are read, the others are
  // kNotRead. With kRegions every state is read.
  std::vector<Fingerprint> fingerprints;
  // Region bytes of the state before the last step (empty for an empty path)
  // and after it (empty when the last step faulted).
  std::vector<std::byte> before;
  std::vector<std::byte> after;
  // The files of the state after the last step (empty when it faulted or
  // the target wrote none), sorted by name; they are in its fingerprint.
  std::vector<FileDigest> files_after;
  std::optional<Fault> fault;
  // received[i][c]: the bytes client c received during step i (a faulting
  // step included).
  std::vector<std::vector<std::string>> received;
  // effects[i]: what step i did to the connections (a faulting step
  // included); may be empty when the executor does not know.
  std::vector<StepEffects> effects;
  // The bytes of every state, [0] the initial one, when the executor was
  // asked to keep them (keep_states); else empty.
  std::vector<std::vector<std::byte>> states;
  // The sources of time and randomness the target used in this run.
  Sources sources;
  // The most threads the target had at a state of this run that was read.
  std::size_t threads = 1;
  // The target's ptrace stops in this run, and those of them for the
  // scheduler alone (tracer::Session::stops), up to the last state read.
  std::size_t stops = 0;
  std::size_t scheduler_stops = 0;
  // With StateKind::kRegions and TargetSpec::audit: the whole-process
  // fingerprint of the state after the last step, to audit a merge of it.
  std::optional<Fingerprint> process_after;
  // The canonical whole-process states with their bytes, [0] the initial
  // one, when the executor was asked to keep them (keep_images); else
  // empty.
  std::vector<decoder::CanonicalState> images;
  // What the last step changed in the whole process, by name
  // (decoder::describe_changes), when the executor was asked to
  // (describe_changes) and the state is the whole process; else empty.
  std::vector<std::string> changes;
  // The heap walk of the last whole-process state read, and what reading
  // and hashing it cost.
  decoder::HeapSummary heap;
  std::size_t bytes_read = 0;
  std::size_t bytes_hashed = 0;
  // What liveness left out of it: dead registers, dead red-zone bytes.
  std::size_t dead_register_bytes = 0;
  std::size_t dead_red_zone_bytes = 0;
  std::size_t dead_frame_bytes = 0;
  // With snapshots (TargetSpec::snapshots): whether the run restored a
  // state it had saved instead of replaying from a fresh start, and
  // whether the search must check it against a replay of the same path
  // (the executor's first restored run and one in 64 after); why states
  // could not be saved or restored in this run; the bytes of the saved
  // states the executor keeps after it, and how many they are.
  bool restored = false;
  bool check_restore = false;
  std::vector<std::string> refusals;
  std::size_t snapshot_bytes = 0;
  std::size_t snapshots_kept = 0;
};

// Runs paths on a fresh target each time (stateless replay). The search
// talks only to this interface; the ptrace backend and the unit tests' fake
// implement it. An instance is used by one thread at a time.
class Executor {
public:
  Executor() = default;
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;
  Executor(Executor &&) = delete;
  Executor &operator=(Executor &&) = delete;
  virtual ~Executor() = default;

  // Starts the target, brings it to its initial state and takes the steps of
  // path in order, stopping at the first fault. An Error means the run could
  // not be observed at all (the target does not start, a region cannot be
  // read, the user interrupted): the check cannot go on.
  virtual Result<Observation> run(std::span<const PathStep> path) = 0;

  // Makes later runs ignore the state bytes at these offsets (volatile
  // bytes: clocks, counters, pointers): they read as zero in every state,
  // so neither the fingerprints nor Observation's bytes show them. The
  // default accepts only an empty mask.
  virtual void set_mask(std::span<const std::size_t> offsets);
  // Asks later runs to fill Observation::states, so that a state whose
  // fingerprint changed can be told apart byte by byte. Optional.
  virtual void keep_states() {}
  // Makes later runs read these bytes of the whole-process state as zero
  // (volatile bytes named by where they are). Optional.
  virtual void set_process_mask(std::span<const decoder::Location> mask) {
    static_cast<void>(mask);
  }
  // Asks later runs to fill Observation::images. Optional.
  virtual void keep_images() {}
  // Asks later runs to fill Observation::changes (for a picture of the
  // search: it costs the bytes of two canonical states a run). Optional.
  virtual void describe_changes() {}
  // Makes later runs replay every path from a fresh start, snapshots or
  // not (the runs that check the others). Optional.
  virtual void replay_only() {}
};

} // namespace cmc::executor
