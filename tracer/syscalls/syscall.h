#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "executor/sources.h"
#include "tracer/process/registers.h"
#include "tracer/schedule/futex_queue.h"
#include "util/result.h"

// The vocabulary of the system-call handlers: what a handler is given (a
// SeccompStop) and returns (an Action), and the row of the table that
// names it (Syscall). The table itself (syscall_table.h) names the
// handlers, so it sits above them.
namespace cmc::tracer {

class Environment;
class ProcessAccess;
struct Syscall;

// What cmc does with a thread stopped on entry to a trapped call.
struct Action {
  enum class Kind : std::uint8_t {
    kRun,    // the call runs
    kAnswer, // the call is skipped and returns result
    kHold,   // the thread waits, stopped, until its wait is over
    kWake,   // the call is skipped: it wakes cmc's futex waiters (wake)
    kYield,  // the call is skipped (returns 0); another thread may run
  };
  // For a held call: whether its wait is over now (another thread wrote to
  // its descriptor or changed its futex word), and what then: kRun, or
  // kAnswer with the call's result. Nothing: it still waits.
  using Recheck = Result<std::optional<Action>> (*)(const ProcessAccess &tracee,
                                                    const Syscall &call,
                                                    const Registers &regs);
  // For a call that runs (kRun, or kHold until it does): what cmc does at
  // its exit, given its registers at entry and its result, before the
  // target sees what it wrote (the thread is resumed to its syscall-exit
  // stop).
  using After = Result<void> (*)(ProcessAccess &tracee,
                                 const Registers &entered, long result);

  Kind kind = Kind::kRun;
  long result = 0; // kAnswer
  // kHold: the elapsed virtual time at which it times out (nothing:
  // never); the result it is skipped with then (nothing: it is made to
  // time out, expire(), and runs); what else ends it (nullptr: nothing);
  // the futex wait it is queued in, which a wake of another thread ends
  // (tracer/schedule/futex_queue.h).
  std::optional<std::chrono::nanoseconds> deadline;
  std::optional<long> result_at_deadline;
  Recheck recheck = nullptr;
  std::optional<FutexWait> futex;
  // kWake: whom it wakes; it returns how many it woke (and, with
  // counts_requeued, requeued).
  FutexWake wake;
  bool counts_requeued = false;
  After after = nullptr;

  static Action run() { return {}; }
  static Action answer(long result) {
    Action action;
    action.kind = Kind::kAnswer;
    action.result = result;
    return action;
  }
  static Action yield() {
    Action action;
    action.kind = Kind::kYield;
    return action;
  }
  static Action wake_futex(const FutexWake &wake, bool counts_requeued) {
    Action action;
    action.kind = Kind::kWake;
    action.wake = wake;
    action.counts_requeued = counts_requeued;
    return action;
  }
  static Action wait_futex(const FutexWait &wait,
                           std::optional<std::chrono::nanoseconds> deadline,
                           long result_at_deadline) {
    Action action = hold(deadline, result_at_deadline, nullptr);
    action.futex = wait;
    return action;
  }
  static Action hold(std::optional<std::chrono::nanoseconds> deadline,
                     std::optional<long> result_at_deadline, Recheck recheck) {
    Action action;
    action.kind = Kind::kHold;
    action.deadline = deadline;
    action.result_at_deadline = result_at_deadline;
    action.recheck = recheck;
    return action;
  }
};

// A thread stopped on entry to a trapped call, as its handler sees it.
struct SeccompStop {
  ProcessAccess &tracee;
  Environment &environment;
  const Syscall &call;
  const Registers &regs;
  // The socket the target listens on, which listen() sets.
  std::optional<int> &listening_fd;
  // Calls so far that changed what the kernel keeps of the target and a
  // snapshot cannot put back (tracer/snapshot/snapshot.h): signal handlers, the
  // working directory, limits.
  std::size_t &unrestorable_calls;

  // The call's arguments, in x86-64 order.
  [[nodiscard]] std::array<std::uint64_t, 6> args() const {
    return regs.args();
  }
};

// What cmc does at the seccomp stop of a call (a row's handler).
using Handler = Result<Action> (*)(SeccompStop &stop);
// For a wait for input: whether nothing it waits for is ready, its timeout
// aside (input_wait.h).
using Blocks = Result<bool> (*)(const ProcessAccess &tracee,
                                const Syscall &call,
                                const std::array<std::uint64_t, 6> &args);

// Where a waiting call keeps its timeout.
struct Timeout {
  enum class Kind : std::uint8_t { kNone, kMillis, kTimespec, kTimeval };
  Kind kind = Kind::kNone;
  std::uint8_t arg = 0;
};

// A condition on one argument, checked by the seccomp filter in the
// kernel: the call stops only when argument arg has any of the bits set
// (one rule per bit: libseccomp ANDs a rule's comparisons and ORs rules).
// arg < 0: it always stops.
struct TrapIf {
  int arg = -1;
  std::uint64_t any_bit = 0;
};

// A path argument of a call that writes to the file system: the index of
// the argument that points to it and of the directory descriptor it is
// relative to (-1: the working directory).
struct PathArg {
  int dirfd = -1;
  int path = -1; // -1: none
};

// The classes of calls strace's -e trace=%CLASS names, a bit each:
// %file a call that takes a file name, %desc one that takes a descriptor
// (not a socket's: those are %network), %memory one that maps memory,
// %process one that ends or replaces the process, %signal one that
// handles signals.
using TraceClasses = std::uint8_t;
constexpr TraceClasses kFile = 1U << 0U;
constexpr TraceClasses kDesc = 1U << 1U;
constexpr TraceClasses kNetwork = 1U << 2U;
constexpr TraceClasses kMemory = 1U << 3U;
constexpr TraceClasses kProcess = 1U << 4U;
constexpr TraceClasses kSignal = 1U << 5U;

// One row per system call cmc knows: everything it knows of the call.
// (The members a row may leave out are initialised, so that the table's
// designated initialisers omit them without GCC's
// -Wmissing-field-initializers.)
struct Syscall {
  std::string_view name;
  long number = -1; // x86-64; -1 for the two rows that are not one call
  // How strace-like output shows its arguments (decoder/syscall_format.h);
  // nothing: six registers in hex.
  std::optional<std::string_view> shape{};
  TraceClasses classes = 0; // of strace's -e trace=%CLASS
  // What cmc does at its stop; nullptr: the filter lets it run untrapped.
  Handler handler = nullptr;
  // The source of time or randomness every stop of it reads, noted for the
  // report before its handler runs.
  std::optional<executor::Source> source{};
  Blocks blocks = nullptr; // a wait for input: see Blocks
  Timeout timeout{};       // a wait: where its timeout is
  int flags_arg = -1;      // a recv: its flags (MSG_DONTWAIT)
  TrapIf trap_if{};
  std::array<PathArg, 2> paths{}; // the paths a write to files names
};

} // namespace cmc::tracer
