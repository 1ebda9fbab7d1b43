#pragma once

#include <sys/types.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// Where the targets of one thread of cmc's live, so that nothing of theirs
// outlives cmc, however cmc ends (SIGKILL included). An init process,
// forked once, leads a PID namespace and a mount namespace of its own: in
// the mount namespace a tmpfs over /dev/shm holds the runs' directories and
// a /proc of the PID namespace is mounted. The init holds the read end of
// a pipe whose only writer is cmc: when cmc dies, by any signal, the
// kernel closes it, the init reads EOF and exits, and the kernel kills
// every process of the PID namespace; the mount namespace, with the tmpfs
// and every run's files, goes with its last process. The init also reaps
// what the targets orphan.
//
// A target spawned into the sandbox (spawn_in) is pid kTargetPid there in
// every run, its children and threads numbered from there: what a program
// keeps of getpid() is the same in every run. It cannot signal cmc, which
// its PID namespace does not contain (its getppid() is 0).
class Sandbox {
public:
  // The pid of every target in its namespace (1 is the init).
  static constexpr pid_t kTargetPid = 2;
  // Where the runs' directories live, as the targets see it.
  static constexpr const char *kRunsDirectory = "/dev/shm";

  // Which of a thread's two sandboxes: the first holds its targets; the
  // second, kAside, the replays made while a target of the first is kept
  // alive (a snapshot's guard), which get there the pid and run directory
  // a fresh run gets, not the next ones free beside the live target.
  enum class Use { kTargets, kAside };
  // The calling thread's sandbox for use, made on its first call: setns()
  // of a PID namespace is per thread, and a thread's targets of one use run
  // one at a time. Every sandbox lasts until cmc's exit.
  [[nodiscard]] static Result<Sandbox *> of_this_thread(Use use);
  // The init of every sandbox of this process, live until its exit.
  [[nodiscard]] static std::vector<pid_t> inits();
  // A sandbox of the caller's own, not among inits(): everything in it
  // dies when it is destroyed, or when cmc dies (a plugin host's).
  [[nodiscard]] static Result<std::unique_ptr<Sandbox>> create();

  Sandbox(const Sandbox &) = delete;
  Sandbox &operator=(const Sandbox &) = delete;
  Sandbox(Sandbox &&) = delete;
  Sandbox &operator=(Sandbox &&) = delete;
  // Closes the pipe and reaps the init, which exits at once; but waits a
  // second at most (an init waits until cmc has reaped every process of
  // its namespace that is cmc's child).
  ~Sandbox();

  [[nodiscard]] pid_t init() const { return init_; }
  // The sandbox's mount namespace (an fd), for a target to join.
  [[nodiscard]] int mount_namespace() const { return mount_ns_.get(); }
  // path (absolute, as a target sees it) as cmc reaches it, through the
  // init's root: /proc/INIT/root/PATH.
  [[nodiscard]] std::string outside(const std::string &path) const;

  // Clones a child in the sandbox's PID namespace that runs
  // entry(argument) on stack and never returns, sharing cmc's memory until
  // it execs (CLONE_VM | CLONE_VFORK, as posix_spawn does): the calling
  // thread waits until then. It is kTargetPid when that pid is free (a
  // process of an earlier target that is still dying may hold it for a
  // moment: then the next free pid). Returns its pid in cmc's namespace.
  [[nodiscard]] Result<pid_t> spawn_in(int (*entry)(void *), void *argument,
                                       std::span<char> stack) const;

private:
  Sandbox(pid_t init, UniqueFd alive, UniqueFd pid_ns, UniqueFd mount_ns,
          UniqueFd init_pidfd)
      : init_(init), alive_(std::move(alive)), pid_ns_(std::move(pid_ns)),
        mount_ns_(std::move(mount_ns)), init_pidfd_(std::move(init_pidfd)) {}

  pid_t init_;
  UniqueFd alive_; // the pipe's write end: the init lives while it is open
  UniqueFd pid_ns_;
  UniqueFd mount_ns_;
  UniqueFd init_pidfd_;
};

// In a child of cmc's (system calls only, see tracee.cc's ChildPlan): joins
// the sandbox's mount
// namespace, whose /proc is the target's, and makes the next pid of its
// PID namespace follow the caller's own, so that what the target starts is
// numbered the same in every run. Returns 0 or an errno value.
int enter_sandbox(int mount_namespace);

// Closes every descriptor from 3 up but keep_a and keep_b (-1: none);
// async-signal-safe. Returns 0 or -1 with errno.
int close_inherited(int keep_a, int keep_b);

} // namespace cmc::tracer
