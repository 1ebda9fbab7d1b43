#include "tracer/process/ptrace_unsafe.h"

#include <elf.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include <fmt/format.h>

namespace cmc::tracer::sys {
namespace {

// ESRCH: pid is gone, or (ptrace) not stopped for cmc; a thread cmc saw
// stopped is then one its process's death or another thread's execve
// killed.
Error errno_error(const char *what, pid_t pid) {
  return system_error(fmt::format("{} on pid {}", what, pid), errno);
}

} // namespace

Result<void> set_options(pid_t pid) {
  const long options = PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP |
                       PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
                       PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |
                       PTRACE_O_TRACESYSGOOD;
  if (ptrace(PTRACE_SETOPTIONS, pid, nullptr, options) != 0)
    return errno_error("PTRACE_SETOPTIONS", pid);
  return {};
}

void resume(pid_t pid, int signal, bool to_syscall_stop) {
  ptrace(to_syscall_stop ? PTRACE_SYSCALL : PTRACE_CONT, pid, nullptr, signal);
}

Result<bool> at_syscall_exit(pid_t pid) {
  __ptrace_syscall_info info{};
  if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) <= 0)
    return errno_error("PTRACE_GET_SYSCALL_INFO", pid);
  return info.op == PTRACE_SYSCALL_INFO_EXIT;
}

Result<unsigned long> event_message(pid_t pid) {
  unsigned long message = 0;
  if (ptrace(PTRACE_GETEVENTMSG, pid, nullptr, &message) != 0)
    return errno_error("PTRACE_GETEVENTMSG", pid);
  return message;
}

Result<user_regs_struct> registers(pid_t pid) {
  user_regs_struct regs{};
  if (ptrace(PTRACE_GETREGS, pid, nullptr, &regs) != 0)
    return errno_error("PTRACE_GETREGS", pid);
  return regs;
}

Result<void> set_registers(pid_t pid, const user_regs_struct &regs) {
  if (ptrace(PTRACE_SETREGS, pid, nullptr, &regs) != 0)
    return errno_error("PTRACE_SETREGS", pid);
  return {};
}

Result<std::vector<std::byte>> extended_registers(pid_t pid) {
  // Larger than any XSAVE area of today (AMX's is 11 KiB); the kernel
  // shortens iov_len to the area's size.
  std::vector<std::byte> area(16384);
  iovec io{area.data(), area.size()};
  if (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &io) != 0)
    return errno_error("PTRACE_GETREGSET NT_X86_XSTATE", pid);
  area.resize(io.iov_len);
  return area;
}

Result<void> set_extended_registers(pid_t pid,
                                    std::span<const std::byte> area) {
  std::vector<std::byte> copy(area.begin(), area.end());
  iovec io{copy.data(), copy.size()};
  if (ptrace(PTRACE_SETREGSET, pid, NT_X86_XSTATE, &io) != 0)
    return errno_error("PTRACE_SETREGSET NT_X86_XSTATE", pid);
  return {};
}

bool still_stopped(pid_t tid) {
  // Any request that needs a stop, with no effect on the tracee.
  unsigned long message = 0;
  return ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &message) == 0 ||
         errno != ESRCH;
}

Result<siginfo_t> signal_info(pid_t pid) {
  siginfo_t info{};
  if (ptrace(PTRACE_GETSIGINFO, pid, nullptr, &info) != 0)
    return errno_error("PTRACE_GETSIGINFO", pid);
  return info;
}

Result<void> set_signal_info(pid_t pid, const siginfo_t &info) {
  if (ptrace(PTRACE_SETSIGINFO, pid, nullptr, &info) != 0)
    return errno_error("PTRACE_SETSIGINFO", pid);
  return {};
}

Result<void> send_signal(pid_t pid, pid_t tid, int signal) {
  if (syscall(SYS_tgkill, pid, tid, signal) != 0)
    return errno_error("tgkill", tid);
  return {};
}

Result<WaitStatus> single_step(pid_t pid) {
  if (ptrace(PTRACE_SINGLESTEP, pid, nullptr, 0) != 0)
    return errno_error("PTRACE_SINGLESTEP", pid);
  return wait_for(pid);
}

Result<WaitStatus> wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, __WALL) < 0) {
    if (errno != EINTR)
      return errno_error("waitpid", pid);
  }
  return WaitStatus(status);
}

Result<std::optional<GroupEvent>> wait_for_group(pid_t pgid, bool block) {
  int status = 0;
  pid_t tid = 0;
  while ((tid = waitpid(-pgid, &status, __WALL | (block ? 0 : WNOHANG))) < 0) {
    if (errno != EINTR)
      return errno_error("waitpid", pgid);
  }
  if (tid == 0)
    return std::optional<GroupEvent>();
  return std::optional(GroupEvent{tid, WaitStatus(status)});
}

Result<std::optional<GroupEvent>> wait_for_own(bool block) {
  int status = 0;
  pid_t tid = 0;
  while ((tid = waitpid(-1, &status,
                        __WALL | __WNOTHREAD | (block ? 0 : WNOHANG))) < 0) {
    if (errno != EINTR)
      return errno_error("waitpid", -1);
  }
  if (tid == 0)
    return std::optional<GroupEvent>();
  return std::optional(GroupEvent{tid, WaitStatus(status)});
}

Result<void> read_memory(pid_t pid, std::span<const iovec> remote,
                         std::span<std::byte> local) {
  const iovec into{local.data(), local.size()};
  const ssize_t got =
      process_vm_readv(pid, &into, 1, remote.data(), remote.size(), 0);
  if (got < 0)
    return errno_error("process_vm_readv", pid);
  if (static_cast<std::size_t>(got) != local.size())
    return Error{fmt::format("process_vm_readv on pid {}: read {} of {} bytes",
                             pid, got, local.size())};
  return {};
}

Result<void> read_memory_scattered(pid_t pid, std::span<const iovec> remote,
                                   std::span<const iovec> local) {
  CMC_CHECK(remote.size() == local.size(), "one local range per remote one");
  for (std::size_t first = 0; first < remote.size(); first += IOV_MAX) {
    const std::size_t count =
        std::min<std::size_t>(IOV_MAX, remote.size() - first);
    std::size_t length = 0;
    for (std::size_t i = first; i < first + count; ++i)
      length += local[i].iov_len;
    const ssize_t got =
        process_vm_readv(pid, &local[first], count, &remote[first], count, 0);
    if (got < 0)
      return errno_error("process_vm_readv", pid);
    // It stops at the first range it cannot read.
    if (static_cast<std::size_t>(got) != length)
      return Error{fmt::format("process_vm_readv on pid {}: read {} of {} "
                               "bytes",
                               pid, got, length)};
  }
  return {};
}

Result<void> write_memory(pid_t pid, std::uint64_t address,
                          std::span<const std::byte> local) {
  const iovec from{const_cast<std::byte *>(local.data()), local.size()};
  const iovec to{reinterpret_cast<void *>(address), local.size()};
  const ssize_t put = process_vm_writev(pid, &from, 1, &to, 1, 0);
  if (put < 0)
    return errno_error("process_vm_writev", pid);
  if (static_cast<std::size_t>(put) != local.size())
    return Error{fmt::format("process_vm_writev on pid {}: wrote {} of {} "
                             "bytes",
                             pid, put, local.size())};
  return {};
}

Result<void> poke_memory(pid_t pid, std::uint64_t address,
                         std::span<const std::byte> local) {
  constexpr std::uint64_t kWord = sizeof(long);
  const std::uint64_t end = address + local.size();
  for (std::uint64_t word = address & ~(kWord - 1); word < end; word += kWord) {
    long value = 0;
    if (word < address || word + kWord > end) {
      // A partial word: keep the bytes around the patch.
      errno = 0;
      value = ptrace(PTRACE_PEEKDATA, pid, word, nullptr);
      if (errno != 0)
        return errno_error("PTRACE_PEEKDATA", pid);
    }
    auto bytes = std::as_writable_bytes(std::span(&value, 1));
    for (std::uint64_t at = std::max(word, address);
         at < std::min(word + kWord, end); ++at)
      bytes[at - word] = local[at - address];
    if (ptrace(PTRACE_POKEDATA, pid, word, value) != 0)
      return errno_error("PTRACE_POKEDATA", pid);
  }
  return {};
}

Result<UniqueFd> pidfd_open(pid_t pid) {
  const long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return errno_error("pidfd_open", pid);
  return UniqueFd(static_cast<int>(fd));
}

std::optional<UniqueFd> pidfd_getfd(int pidfd, int fd) {
  const long copy = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  if (copy < 0)
    return std::nullopt;
  return UniqueFd(static_cast<int>(copy));
}

int child_trace_me() {
  return syscall(SYS_ptrace, PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0
                                                                       : -errno;
}

int child_install_filter(const sock_fprog &program) {
  if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -errno;
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)
    return -errno;
  return 0;
}

} // namespace cmc::tracer::sys
