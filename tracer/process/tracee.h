#pragma once

#include <linux/filter.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "decoder/proc_maps.h"
#include "tracer/process/output_drain.h"
#include "tracer/process/process_access.h"
#include "tracer/process/wait_status.h"
#include "tracer/process/watchdog.h"
#include "tracer/sandbox/run_files.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// How to start a target.
struct LaunchSpec {
  std::string program;           // path of the executable
  std::vector<std::string> argv; // argv[0] included
  bool aslr = false;             // false: personality(ADDR_NO_RANDOMIZE)
  bool show_output = false;      // false: stdout and stderr to a pipe of cmc's
  int netns = -1; // network namespace to join (an fd); -1: a fresh one
  // In the thread's second sandbox (Sandbox::Use::kAside): a replay made
  // while a target of the first is alive.
  bool aside = false;
  // Stop on every system call (observing_program), not only the table's:
  // the filter to spawn it with (seccomp_filter).
  bool observe = false;
  // Paths the target may write besides its working directory, each a
  // private copy per run (RunFiles); relative ones are relative to the
  // working directory.
  std::vector<std::string> writable;
  // Keep what of the files would survive a crash (--crash; RunFiles).
  bool durable = false;
};

// The seccomp filter a target runs under, which tracer/syscalls/ builds
// from its table (seccomp_filter): a program built once, or one built for
// each launch, given the descriptor on which a failed launch reports (the
// filter must let the target write its report there).
struct SeccompFilter {
  const sock_fprog *program = nullptr;
  std::vector<sock_filter> (*build)(int report_fd) = nullptr;
};

// A target process under ptrace, in a network namespace of its own, with
// the seccomp filter it is given, in the spawning thread's Sandbox
// (where it is pid Sandbox::kTargetPid). The destructor kills the target's
// whole process group and reaps every traced process: no path leaves one
// behind. It runs in a private working directory of its own, with private
// copies of the writable paths (in a mount namespace of its own when one
// is absolute), all removed with their contents at the end; if cmc dies
// first, the Sandbox takes them all with it.
class Tracee final : public ProcessAccess {
public:
  // Forks, sets the child up and execs it; returns stopped after execve.
  // It runs on files (a crashed run's, Tracee::crash), or on new ones.
  [[nodiscard]] static Result<std::unique_ptr<Tracee>>
  spawn(const LaunchSpec &spec, const SeccompFilter &filter,
        std::optional<RunFiles> given = std::nullopt);

  Tracee(const Tracee &) = delete;
  Tracee &operator=(const Tracee &) = delete;
  Tracee(Tracee &&) = delete;
  Tracee &operator=(Tracee &&) = delete;
  ~Tracee() override;

  // ProcessAccess, over ptrace and /proc.
  [[nodiscard]] pid_t pid() const override { return pid_; }
  [[nodiscard]] pid_t focused() const override { return focus_; }
  [[nodiscard]] pid_t process() const override { return group_of(focus_); }
  void focus(pid_t tid) override { focus_ = tid; }
  void resume(int signal = 0, bool to_syscall_stop = false) override;
  [[nodiscard]] Result<std::optional<WaitStatus>>
  wait(bool block = true) override;
  [[nodiscard]] bool still_stopped(pid_t tid) const override;
  [[nodiscard]] Result<pid_t> thread_group(pid_t tid) const override;
  [[nodiscard]] Result<pid_t> namespace_tid(pid_t tid) const override;
  void adopt(pid_t tid, pid_t group) override;
  void forget(pid_t tid) override;
  void leaves_group(pid_t process) override;
  [[nodiscard]] bool hung() const override { return lease_->expired(); }
  [[nodiscard]] Result<bool> at_syscall_exit() const override;
  [[nodiscard]] Result<unsigned long> event_message() const override;
  [[nodiscard]] Result<siginfo_t> signal_info() const override;
  [[nodiscard]] Result<void> set_signal_info(const siginfo_t &info) override;
  [[nodiscard]] Result<void> send_signal(pid_t tid, int signal) override;
  [[nodiscard]] Result<Registers> registers() const override;
  [[nodiscard]] Result<void> set_registers(const Registers &regs) override;
  [[nodiscard]] Result<std::vector<executor::Frame>>
  backtrace(std::size_t max_frames) const override;
  // ProcessAccess's read and write of the T a RemotePtr points to, which
  // the overrides below would hide.
  using ProcessAccess::read;
  using ProcessAccess::write;
  [[nodiscard]] Result<void> read(std::span<const iovec> remote,
                                  std::span<std::byte> local) const override;
  [[nodiscard]] Result<void> write(std::uint64_t address,
                                   std::span<const std::byte> bytes) override;
  [[nodiscard]] Result<void>
  patch_code(std::uint64_t address, std::span<const std::byte> bytes) override;
  // The call must not be one the table of syscall_table.h stops for (a
  // stop of observing_program is stepped over).
  [[nodiscard]] Result<long>
  inject_syscall(std::uint64_t syscall_at, long nr,
                 const std::array<std::uint64_t, 3> &args) override;
  [[nodiscard]] std::optional<UniqueFd> duplicate_fd(int fd) const override {
    return duplicate_fd_of(process(), fd);
  }
  // The same, of process (one of processes()).
  [[nodiscard]] std::optional<UniqueFd> duplicate_fd_of(pid_t process,
                                                        int fd) const;
  // The target's living processes: the first, then those it started that
  // cmc adopted, by id.
  [[nodiscard]] std::vector<pid_t> processes() const;
  [[nodiscard]] Result<std::string> proc_file(const char *leaf) const override;
  [[nodiscard]] Result<std::vector<decoder::Mapping>> maps() const override;
  [[nodiscard]] bool may_write(const std::string &path) const override {
    return files_->may_write(path);
  }
  [[nodiscard]] DurableFiles *durable_files() override {
    return files_->durable();
  }

  [[nodiscard]] int pidfd() const { return pidfd_.get(); }
  [[nodiscard]] Watchdog::Lease &lease() { return *lease_; }
  [[nodiscard]] const Watchdog::Lease &lease() const { return *lease_; }
  // resume(), then wait() for the next stop or end of any thread.
  [[nodiscard]] Result<WaitStatus>
  resume_and_wait(int signal = 0, bool to_syscall_stop = false);
  // The focused thread's x87, SSE and AVX registers (its XSAVE area).
  [[nodiscard]] Result<std::vector<std::byte>> extended_registers() const;
  [[nodiscard]] Result<void>
  set_extended_registers(std::span<const std::byte> area);
  // Makes the focused thread, stopped at the seccomp stop of a call it
  // entered with registers entered, run nr(args) in place of that call,
  // then enter that call again (its syscall instruction, same registers)
  // to the same kind of stop, every register restored: the call it was
  // stopped at still runs when it is resumed. The filter must trap the
  // call with those registers (it did); nr need not be one it traps.
  // Returns nr's result (-errno on failure); kTargetGone when the target
  // died meanwhile.
  [[nodiscard]] Result<long>
  call_at_seccomp_stop(const Registers &entered, long nr,
                       const std::array<std::uint64_t, 4> &args);
  // What the target wrote to its stdout and stderr so far (nothing with
  // show_output), read from their pipe as it writes (OutputDrain).
  [[nodiscard]] TargetOutput output() const { return output_->output(); }
  // Puts back what output() returned (a restored snapshot's).
  void restore_output(TargetOutput output) const {
    output_->restore(std::move(output));
  }
  // The files the target may write: its working directory and copies.
  [[nodiscard]] const RunFiles &files() const { return *files_; }
  [[nodiscard]] RunFiles &files() { return *files_; }
  // Kills every process of the target with SIGKILL and reaps them, as the
  // destructor does, and hands over its files for the next run (--crash).
  [[nodiscard]] RunFiles crash();
  // Whether the target is known to have ended (it has been reaped).
  [[nodiscard]] bool reaped() const { return reaped_; }

private:
  explicit Tracee(pid_t pid);
  // After spawn's clone: waits for the child's stop after its execve and
  // sets it up for tracing; else the Error of its launch (report_fd: the
  // child's report of the step that failed).
  [[nodiscard]] Result<void> await_exec(const LaunchSpec &spec, int report_fd);
  // The focused thread ended (status) in a call cmc injected.
  [[nodiscard]] Error died_in_call(const WaitStatus &status);
  // The next stop of the focused thread after a resume of cmc's own; an
  // Error (kTargetGone when it died) unless it is of the kind expected.
  [[nodiscard]] Result<void> own_stop(bool (WaitStatus::*expected)() const,
                                      const char *what);
  // Kills every process of the target and reaps them.
  void kill_and_reap();
  // The next event of the target's tasks once a process left its process
  // group (wait() before focusing it): of any task the calling thread
  // traces; another target's is kept for it.
  [[nodiscard]] Result<std::optional<std::pair<pid_t, WaitStatus>>>
  wait_scattered(bool block);
  // Whether task tid, which the calling thread traces, is one of the
  // target's: adopted, or a process or thread a process of it created.
  [[nodiscard]] bool owns(pid_t tid) const;
  // The process thread tid is a thread of (the leader's by default).
  [[nodiscard]] pid_t group_of(pid_t tid) const {
    const auto found = groups_.find(tid);
    return found == groups_.end() ? pid_ : found->second;
  }

  pid_t pid_;
  pid_t focus_;
  bool reaped_ = false;
  // The processes of the target that left its process group, each
  // leading a group of its own (leaves_group()): once there is one, wait()
  // waits for every task the calling thread traces.
  std::vector<pid_t> left_;
  // The end of the leader, reaped by inject_syscall, for wait() to report.
  std::optional<WaitStatus> ended_;
  std::vector<pid_t> adopted_;
  mutable std::map<pid_t, pid_t> namespace_tids_; // cmc's id -> the target's
  // The process of each thread adopted (adopt()).
  std::map<pid_t, pid_t> groups_;
  UniqueFd pidfd_;
  // pidfds of the processes the target started, opened at their first
  // duplicate_fd.
  mutable std::map<pid_t, UniqueFd> pidfds_;
  std::optional<RunFiles> files_; // removed after the target is reaped
  std::unique_ptr<OutputDrain::Registration> output_;
  std::unique_ptr<Watchdog::Lease> lease_;
};

} // namespace cmc::tracer
