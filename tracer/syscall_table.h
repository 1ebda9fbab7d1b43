#pragma once

#include <linux/filter.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tracer/sources.h"

namespace cmc::tracer {

// What cmc does when the target enters a trapped system call.
enum class Trap : std::uint8_t {
  kListen,      // remember the listening socket (argument 0)
  kFdInput,     // blocks until fd (argument 0) is readable
  kRecv,        // like kFdInput, unless flags has MSG_DONTWAIT
  kPoll,        // poll(fds, nfds, timeout_ms)
  kPpoll,       // ppoll(fds, nfds, timespec *, ...)
  kSelect,      // select(nfds, r, w, e, timeval *)
  kPselect,     // pselect6(nfds, r, w, e, timespec *, ...)
  kEpollWait,   // epoll_wait / epoll_pwait(epfd, events, max, timeout_ms)
  kEpollPwait2, // epoll_pwait2(epfd, events, max, timespec *, ...)
  kSleep,       // nanosleep(req, rem)
  kClockSleep,  // clock_nanosleep(clock, flags, req, rem)
  kFutex,       // futex(word, op, val, timeout, ...): a timed wait sleeps
  kTimerfdSet,  // timerfd_settime, run on the virtual clock
  kTimerfdGet,  // timerfd_gettime
  kEmulate,     // answered by cmc from the virtual clock or the seed
  kRefuse,      // fails with ENOSYS: it would bypass the tracer
  kTimer,       // arms a timer cmc does not control: the check stops
  kPassThrough, // runs, and the report lists it as not controlled
  kWritePath,   // writes to the file system: runs if the paths are the run's
  kObserve,     // any call not in the table, under observing_program
  kForeignArch, // a system call of another ABI (int 0x80 from x86-64)
};

// A path argument of a kWritePath call: the index of the argument that
// points to it and of the directory descriptor it is relative to (-1: the
// working directory).
struct PathArg {
  int dirfd = -1;
  int path = -1; // -1: none
};

// One row of the table of system calls the seccomp filter stops on.
struct TrappedSyscall {
  const char *name;
  Trap trap;
  // kRecv: index of the flags argument; kWritePath: of open's flags, and
  // the filter stops the call only when they ask to write.
  int flags_arg = -1;
  // The source of time or randomness it reads, for the report.
  std::optional<Source> source = std::nullopt;
  std::array<PathArg, 2> paths{}; // kWritePath
};

// The rows, in a fixed order: a row's index is the SECCOMP_RET_DATA of its
// filter rule, so a seccomp stop names its row without a number lookup.
[[nodiscard]] std::span<const TrappedSyscall> trapped_syscalls();

// The row for a seccomp stop's SECCOMP_RET_DATA, or nullptr.
[[nodiscard]] const TrappedSyscall *trapped_syscall(unsigned long data);

// The BPF program, built once with libseccomp: every syscall runs freely
// except the table's rows, which stop the target for cmc.
[[nodiscard]] const sock_fprog &seccomp_program();

// The same rules over a default of stopping on every other system call
// too (row kObserve), so a run records every call site. The launch's own
// execve (made before cmc can set PTRACE_O_TRACESECCOMP, when a traced call
// would fail with ENOSYS) is allowed, as is its write of a failure report
// to report_fd: the target's execve calls are not observed at their sites.
[[nodiscard]] std::vector<sock_filter> observing_program(int report_fd);

} // namespace cmc::tracer
