#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "decoder/proc_maps.h"
#include "executor/frame.h"
#include "tracer/process/registers.h"
#include "tracer/process/remote_ptr.h"
#include "tracer/process/wait_status.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

class DurableFiles;

// A thread of a target and its registers (Session::thread_registers).
struct ThreadRegisters {
  pid_t id = 0;
  Registers registers{};
};

// What Session and the system-call handlers need of a stopped target: its
// threads' stops and resumption, registers, memory, descriptors and /proc
// files. Tracee is the ptrace implementation; tests/unit/fake_process.h is
// a scripted one, so the handlers and Session's thread states are tested
// without a process.
//
// A process's threads share its memory, but each stops on its own:
// requests about registers, stops and resumption go to the focused thread,
// the one whose stop wait() reported last or that focus() named; requests
// about memory, descriptors and /proc files to its process. Ids are
// cmc's (of its PID namespace) unless said otherwise. An Error of kind
// kTargetGone means the target, or the thread asked about, died: how comes
// from wait(), it is not an error of cmc.
class ProcessAccess {
public:
  ProcessAccess() = default;
  ProcessAccess(const ProcessAccess &) = delete;
  ProcessAccess &operator=(const ProcessAccess &) = delete;
  ProcessAccess(ProcessAccess &&) = delete;
  ProcessAccess &operator=(ProcessAccess &&) = delete;
  virtual ~ProcessAccess() = default;

  // The leader's id; it is focused first.
  [[nodiscard]] virtual pid_t pid() const = 0;
  [[nodiscard]] virtual pid_t focused() const = 0;
  // The process of the focused thread (its thread group id): the first
  // process, or one it started. Memory, descriptors and /proc files are
  // that process's.
  [[nodiscard]] virtual pid_t process() const = 0;
  virtual void focus(pid_t tid) = 0;
  // Resumes the focused thread, delivering signal (0: none); with
  // to_syscall_stop, it also stops at its next syscall entry or exit.
  virtual void resume(int signal = 0, bool to_syscall_stop = false) = 0;
  // Waits for the next stop or end of any thread and focuses it; with
  // block false, nothing when no thread has one ready.
  [[nodiscard]] virtual Result<std::optional<WaitStatus>>
  wait(bool block = true) = 0;
  // Whether thread tid is still in a ptrace stop. Only a SIGKILL ends a
  // stop that cmc has not: its whole process dies, or another of its
  // threads called execve; the thread's end then comes from wait().
  [[nodiscard]] virtual bool still_stopped(pid_t tid) const = 0;
  // The thread group of tid, a task ptrace attached: the process it is a
  // thread of (tid itself for a process the target started).
  [[nodiscard]] virtual Result<pid_t> thread_group(pid_t tid) const = 0;
  // The id thread tid has in the target's PID namespace: what its gettid()
  // returns, glibc keeps, and its /proc shows.
  [[nodiscard]] virtual Result<pid_t> namespace_tid(pid_t tid) const = 0;
  // A process or thread the target created, auto-attached by ptrace, a
  // thread of process group (thread_group): it is killed and reaped with
  // the target.
  virtual void adopt(pid_t tid, pid_t group) = 0;
  // A thread that ended and was reaped: its id may be reused.
  virtual void forget(pid_t tid) = 0;
  // Process process of the target leaves the target's process group
  // (setsid, setpgid): it is followed, and killed with the target, all
  // the same.
  virtual void leaves_group(pid_t process) = 0;
  // Whether the watchdog found the target hung (and killed it).
  [[nodiscard]] virtual bool hung() const = 0;

  // Whether the focused thread is stopped at a syscall's exit (not its
  // entry).
  [[nodiscard]] virtual Result<bool> at_syscall_exit() const = 0;
  // The PTRACE_GETEVENTMSG value of the focused thread's stop (the
  // SECCOMP_RET_DATA of a seccomp stop, the new id of a clone stop).
  [[nodiscard]] virtual Result<unsigned long> event_message() const = 0;
  [[nodiscard]] virtual Result<siginfo_t> signal_info() const = 0;
  // At a signal-delivery stop: the siginfo the target's handler gets.
  [[nodiscard]] virtual Result<void> set_signal_info(const siginfo_t &info) = 0;
  // Sends signal to thread tid (tgkill): it is pending until the thread
  // runs (and does not block it), then stops cmc at its delivery.
  [[nodiscard]] virtual Result<void> send_signal(pid_t tid, int signal) = 0;
  [[nodiscard]] virtual Result<Registers> registers() const = 0;
  [[nodiscard]] virtual Result<void> set_registers(const Registers &regs) = 0;
  // A few frames of the focused thread's stack, innermost first.
  [[nodiscard]] virtual Result<std::vector<executor::Frame>>
  backtrace(std::size_t max_frames) const = 0;

  // Reads the remote ranges into local, which has the same total length.
  [[nodiscard]] virtual Result<void> read(std::span<const iovec> remote,
                                          std::span<std::byte> local) const = 0;
  // Reads the T ptr points to.
  template <typename T> [[nodiscard]] Result<T> read(RemotePtr<T> ptr) const {
    T value{};
    const iovec remote{reinterpret_cast<void *>(ptr.address()), sizeof(T)};
    auto bytes = std::as_writable_bytes(std::span(&value, 1));
    if (auto done = read(std::span(&remote, 1), bytes); !done)
      return done.error();
    return value;
  }
  // Writes bytes to writable memory of the target.
  [[nodiscard]] virtual Result<void>
  write(std::uint64_t address, std::span<const std::byte> bytes) = 0;
  // Writes value over the T ptr points to (writable memory).
  template <typename T>
  [[nodiscard]] Result<void> write(RemotePtr<T> ptr, const T &value) {
    return write(ptr.address(), std::as_bytes(std::span(&value, 1)));
  }
  // Writes bytes over the target's code (copy-on-write, as a breakpoint).
  [[nodiscard]] virtual Result<void>
  patch_code(std::uint64_t address, std::span<const std::byte> bytes) = 0;
  // Makes the stopped target run the system call nr(args) on the syscall
  // instruction at syscall_at, with every register restored afterwards.
  // Returns its result (-errno on failure); kTargetGone when the target
  // died in it.
  [[nodiscard]] virtual Result<long>
  inject_syscall(std::uint64_t syscall_at, long nr,
                 const std::array<std::uint64_t, 3> &args) = 0;

  // A duplicate of the target's descriptor fd (the same open file
  // description), if it has one.
  [[nodiscard]] virtual std::optional<UniqueFd> duplicate_fd(int fd) const = 0;
  // The text of /proc/PID/<leaf>, e.g. "auxv".
  [[nodiscard]] virtual Result<std::string>
  proc_file(const char *leaf) const = 0;
  // /proc/PID/maps, parsed.
  [[nodiscard]] virtual Result<std::vector<decoder::Mapping>> maps() const = 0;
  // Whether the target may write at path (RunFiles::may_write).
  [[nodiscard]] virtual bool may_write(const std::string &path) const = 0;
  // What of its files would survive a crash (RunFiles::durable); nullptr
  // when cmc does not keep it (without --crash).
  [[nodiscard]] virtual DurableFiles *durable_files() { return nullptr; }
};

} // namespace cmc::tracer
