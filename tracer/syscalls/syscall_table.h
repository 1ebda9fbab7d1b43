#pragma once

#include <linux/filter.h>
#include <sys/user.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/syscall_format.h"
#include "executor/sources.h"
#include "util/result.h"

namespace cmc::tracer {

class Environment;
class Tracee;
struct Syscall;

// What cmc does with a thread stopped on entry to a trapped call.
struct Action {
  enum class Kind : std::uint8_t {
    kRun,    // the call runs
    kAnswer, // the call is skipped and returns result
    kHold,   // the thread waits, stopped, until its wait is over
    kPark,   // the call runs, and sleeps in the kernel (a futex wait)
  };
  // For a held call: whether its wait is over now (another thread wrote to
  // its descriptor or changed its futex word), and what then: kRun, or
  // kAnswer with the call's result. Nothing: it still waits.
  using Recheck = Result<std::optional<Action>> (*)(
      const Tracee &tracee, const Syscall &call, const user_regs_struct &regs);

  Kind kind = Kind::kRun;
  long result = 0; // kAnswer
  // kHold: the elapsed virtual time at which it times out (nothing:
  // never); the result it is skipped with then (nothing: it is made to
  // time out, expire(), and runs); what else ends it (nullptr: nothing).
  std::optional<std::chrono::nanoseconds> deadline;
  std::optional<long> result_at_deadline;
  Recheck recheck = nullptr;

  static Action run() { return {}; }
  static Action answer(long result) {
    Action action;
    action.kind = Kind::kAnswer;
    action.result = result;
    return action;
  }
  static Action park() {
    Action action;
    action.kind = Kind::kPark;
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
  Tracee &tracee;
  Environment &environment;
  const Syscall &call;
  const user_regs_struct &regs;
  // The socket the target listens on, which listen() sets.
  std::optional<int> &listening_fd;
  // Calls so far that changed what the kernel keeps of the target and a
  // snapshot cannot put back (tracer/snapshot/snapshot.h): signal handlers, the
  // working directory, limits.
  std::size_t &unrestorable_calls;

  // The call's arguments, in x86-64 order.
  [[nodiscard]] std::array<std::uint64_t, 6> args() const {
    return {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9};
  }
};

// What cmc does at the seccomp stop of a call (a row's handler).
using Handler = Result<Action> (*)(SeccompStop &stop);
// For a wait for input: whether nothing it waits for is ready, its timeout
// aside (input_wait.h).
using Blocks = Result<bool> (*)(const Tracee &tracee, const Syscall &call,
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
struct Syscall {
  std::string_view name;
  long number = -1; // x86-64; -1 for the two rows that are not one call
  // How strace-like output shows its arguments (decoder/syscall_format.h);
  // nothing: six registers in hex.
  std::optional<std::string_view> shape;
  TraceClasses classes = 0; // of strace's -e trace=%CLASS
  // What cmc does at its stop; nullptr: the filter lets it run untrapped.
  Handler handler = nullptr;
  // The source of time or randomness every stop of it reads, noted for the
  // report before its handler runs.
  std::optional<Source> source;
  Blocks blocks = nullptr; // a wait for input: see Blocks
  Timeout timeout;         // a wait: where its timeout is
  int flags_arg = -1;      // a recv: its flags (MSG_DONTWAIT)
  TrapIf trap_if;
  std::array<PathArg, 2> paths{}; // the paths a write to files names
};

// The rows of real calls, in a fixed order: a row's index is the
// SECCOMP_RET_DATA of its filter rule.
[[nodiscard]] std::span<const Syscall> syscalls();

// The row a seccomp stop's SECCOMP_RET_DATA names, or nullptr. Besides the
// calls' rows: the one of any call not in the table under
// observing_program, and the one of a call of a foreign ABI.
[[nodiscard]] const Syscall *syscall_at(unsigned long data);

// The row of the x86-64 call number, or nullptr.
[[nodiscard]] const Syscall *syscall_of(long number);

// The call as strace shows it (decoder::format_syscall), with its row's
// shape; and the same in parts (decoder::format_call).
[[nodiscard]] std::string
format_syscall(long number, const std::array<std::uint64_t, 6> &args,
               std::optional<long> result, const decoder::MemoryReader &read,
               const decoder::FormatOptions &options = {});
[[nodiscard]] decoder::FormattedCall
format_call(long number, const std::array<std::uint64_t, 6> &args,
            std::optional<long> result, const decoder::MemoryReader &read,
            const decoder::FormatOptions &options = {});

// Which calls a trace shows, as strace's -e trace=SET says: a comma list
// of call names (any x86-64 call) and classes (%file, %desc, %network,
// %memory, %process, %signal: of the table's rows), "all" or "none", the
// whole list negated by a leading "!".
class TraceFilter {
public:
  // Every call.
  TraceFilter() = default;
  // The filter of a list, or the error naming the word that is none of
  // the above.
  [[nodiscard]] static Result<TraceFilter> parse(std::string_view list);

  [[nodiscard]] bool shows(long number) const;

private:
  std::vector<long> numbers_; // sorted
  bool negated_ = true;       // numbers_ are the calls not shown
};

// The BPF program, built once with libseccomp: every syscall runs freely
// except the rows with a handler, which stop the target for cmc.
[[nodiscard]] const sock_fprog &seccomp_program();

// The same rules over a default of stopping on every other system call
// too (the row of any other call), so a run records every call site. The
// launch's own execve (made before cmc can set PTRACE_O_TRACESECCOMP, when
// a traced call would fail with ENOSYS) is allowed, as is its write of a
// failure report to report_fd: the target's execve calls are not observed
// at their sites.
[[nodiscard]] std::vector<sock_filter> observing_program(int report_fd);

} // namespace cmc::tracer
