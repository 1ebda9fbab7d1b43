#pragma once

#include <sys/user.h>

#include <chrono>
#include <optional>

#include "tracer/syscall_table.h"
#include "tracer/tracee.h"
#include "util/result.h"

namespace cmc::tracer {

// What a trapped input syscall would do if it ran now.
struct Wait {
  bool blocks = false; // nothing it waits for is ready and it may wait
  // How long it may wait, on the virtual clock; nothing: forever.
  std::optional<std::chrono::nanoseconds> timeout;
};

// Decides, at the seccomp stop on entry to a trapped input syscall, whether
// the call would block. The target is then quiescent, waiting for input cmc
// has not sent or for its timeout, which fires when a tick of the virtual
// clock passes it (expire).
[[nodiscard]] Result<Wait> would_block(const Tracee &tracee,
                                       const TrappedSyscall &call,
                                       const user_regs_struct &regs);

// Whether the trapped input call at this stop waits, among others, for fd
// (a listening socket: then it waits for a client). An epoll wait waits for
// the descriptors registered with its instance (/proc/PID/fdinfo).
[[nodiscard]] Result<bool> waits_on(const Tracee &tracee,
                                    const TrappedSyscall &call,
                                    const user_regs_struct &regs, int fd);

// Makes the waiting call at this stop time out at once when resumed: its
// timeout becomes zero. A timeout passed by pointer is replaced by a
// pointer to a zero value written below the target's stack red zone.
[[nodiscard]] Result<void> expire(Tracee &tracee, const TrappedSyscall &call,
                                  user_regs_struct regs);

} // namespace cmc::tracer
