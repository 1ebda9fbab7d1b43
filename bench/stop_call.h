#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <array>
#include <cstdint>
#include <optional>

#include "util/result.h"

namespace cmc::bench {

// The registers of a thread about to execute again the system call it is
// stopped in: its syscall instruction is the two bytes before rip.
[[nodiscard]] user_regs_struct reentering(const user_regs_struct &at_call);

// Resumes pid and expects it to stop at the seccomp filter's next stop.
[[nodiscard]] Result<void> run_to_seccomp_stop(pid_t pid);

// What a call made by call_at_stop returned, and for a fork the child's
// pid (cmc's), the child at its first stop: the SIGSTOP of
// PTRACE_O_TRACEFORK, which also makes it inherit the tracing (the filter
// is inherited in any case).
struct StopCall {
  long result = 0;
  std::optional<pid_t> child;
};

// Makes thread pid, held at a seccomp stop on entry to a call with
// registers at_call, run nr(args) and come back to that stop. Once a
// seccomp stop ends the kernel runs the call orig_rax names (the filter
// checks it again), so the thread runs nr instead; at its exit it executes
// its syscall instruction again, which enters the first call, and the
// filter stops it there again. nr may be a call the filter stops for: the
// kernel does not stop a call changed at a seccomp stop a second time.
[[nodiscard]] Result<StopCall>
call_at_stop(pid_t pid, const user_regs_struct &at_call, long nr,
             const std::array<std::uint64_t, 6> &args);

} // namespace cmc::bench
