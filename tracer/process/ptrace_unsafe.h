#pragma once

// Every raw ptrace, process_vm_readv, pidfd and seccomp call of cmc is in
// ptrace_unsafe.cc, so the few places that touch another process can be
// audited together. Each failure keeps its errno; ESRCH from any of them
// means the target, or the thread asked about, died (an Error of kind
// kTargetGone): callers learn how from waitpid, it is not an error of cmc.

#include <csignal>
#include <linux/filter.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tracer/process/wait_status.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer::sys {

// Options every tracee gets: kill it when cmc exits, stop it on the
// seccomp filter's SECCOMP_RET_TRACE, follow its clones, forks and execs,
// mark syscall stops (SIGTRAP | 0x80).
[[nodiscard]] Result<void> set_options(pid_t pid);
// Resumes a stopped tracee, delivering signal (0 for none); with
// to_syscall_stop, it stops again at its next syscall entry or exit
// (PTRACE_SYSCALL). ESRCH is fine.
void resume(pid_t pid, int signal, bool to_syscall_stop);
// Whether a syscall stop is at the exit of the call, not its entry
// (PTRACE_GET_SYSCALL_INFO).
[[nodiscard]] Result<bool> at_syscall_exit(pid_t pid);
// The PTRACE_GETEVENTMSG value of the current stop (the SECCOMP_RET_DATA of
// a seccomp stop, the new pid of a clone stop).
[[nodiscard]] Result<unsigned long> event_message(pid_t pid);
[[nodiscard]] Result<user_regs_struct> registers(pid_t pid);
[[nodiscard]] Result<void> set_registers(pid_t pid,
                                         const user_regs_struct &regs);
// The XSAVE area (PTRACE_GETREGSET NT_X86_XSTATE): the x87, SSE and AVX
// registers, as long as this CPU's is.
[[nodiscard]] Result<std::vector<std::byte>> extended_registers(pid_t pid);
[[nodiscard]] Result<void>
set_extended_registers(pid_t pid, std::span<const std::byte> area);
// Whether tid is still in a ptrace stop. Only a SIGKILL ends a stop that
// cmc has not: its whole process dies, or another of its threads called
// execve; the thread's end then comes from waitpid.
[[nodiscard]] bool still_stopped(pid_t tid);
// The siginfo of a signal-delivery stop.
[[nodiscard]] Result<siginfo_t> signal_info(pid_t pid);
// Replaces it (PTRACE_SETSIGINFO): the handler sees info.
[[nodiscard]] Result<void> set_signal_info(pid_t pid, const siginfo_t &info);
// Sends signal to thread tid of process pid (tgkill).
[[nodiscard]] Result<void> send_signal(pid_t pid, pid_t tid, int signal);
// Executes one instruction of a stopped tracee, then waits for its stop.
[[nodiscard]] Result<WaitStatus> single_step(pid_t pid);
// Blocks until pid changes state; retries EINTR.
[[nodiscard]] Result<WaitStatus> wait_for(pid_t pid);
// The next change of state of any process or thread of process group pgid
// cmc traces, and which one it was; with block false, nothing when none is
// ready yet.
struct GroupEvent {
  pid_t tid;
  WaitStatus status;
};
[[nodiscard]] Result<std::optional<GroupEvent>> wait_for_group(pid_t pgid,
                                                               bool block);
// The same for any task the calling thread traces or is the parent of
// (__WNOTHREAD: not those of cmc's other threads).
[[nodiscard]] Result<std::optional<GroupEvent>> wait_for_own(bool block);

// Reads the remote ranges into local, which has the same total length.
[[nodiscard]] Result<void> read_memory(pid_t pid, std::span<const iovec> remote,
                                       std::span<std::byte> local);

// Reads each remote range into the local range of the same index and
// length, IOV_MAX ranges per process_vm_readv.
[[nodiscard]] Result<void> read_memory_scattered(pid_t pid,
                                                 std::span<const iovec> remote,
                                                 std::span<const iovec> local);

// Writes local to the remote address: writable memory only.
[[nodiscard]] Result<void> write_memory(pid_t pid, std::uint64_t address,
                                        std::span<const std::byte> local);
// Writes local over code or other read-only memory, a word at a time with
// PTRACE_POKEDATA (which breaks copy-on-write as a debugger's breakpoint
// does; process_vm_writev cannot write read-only pages).
[[nodiscard]] Result<void> poke_memory(pid_t pid, std::uint64_t address,
                                       std::span<const std::byte> local);

[[nodiscard]] Result<UniqueFd> pidfd_open(pid_t pid);
// A duplicate of the target's descriptor fd (same open file description),
// or nothing when the target has no such descriptor.
[[nodiscard]] std::optional<UniqueFd> pidfd_getfd(int pidfd, int fd);

// Child side, between fork and exec: only system calls, made with
// syscall(2) (see tracee.cc's ChildPlan). Return -errno on failure, 0 on
// success.
int child_trace_me();
int child_install_filter(const sock_fprog &program);

} // namespace cmc::tracer::sys
