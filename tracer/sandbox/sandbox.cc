#include "tracer/sandbox/sandbox.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "util/check.h"

namespace cmc::tracer {
namespace {

// The init's set-up steps, for the report of the one that failed.
enum class InitStage : int {
  kReady,
  kDescriptors,
  kPrivate,
  kNoatime,
  kTmpfs,
  kProc
};

const char *init_stage_name(InitStage stage) {
  static constexpr std::array kNames{
      "",
      "closing inherited descriptors",
      "making its mounts private (cmc needs root or CAP_SYS_ADMIN)",
      "making reads leave access times alone (noatime)",
      "mounting a tmpfs over /dev/shm",
      "mounting /proc"};
  return kNames.at(static_cast<std::size_t>(stage));
}

struct InitReport {
  InitStage stage = InitStage::kReady;
  int error = 0;
};

InitReport set_up_init(int from_cmc, int report) {
  // Nor cmc's standard descriptors: whoever reads cmc's output to its end
  // (a pipe, a test) must see that end when cmc dies, not when the init
  // does, which is after the targets cmc leaves are reaped, perhaps by that
  // reader.
  if (close_inherited(from_cmc, report) != 0 || close_range(0, 2, 0) != 0)
    return {InitStage::kDescriptors, errno};
  // A new mount namespace copies cmc's mounts with their propagation: on a
  // shared "/" (systemd's default) the tmpfs would appear in cmc's too.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return {InitStage::kPrivate, errno};
  // A target's read must not change what the next run sees: under
  // relatime the first read of a file sets its access time, so a target
  // that keeps what stat() says of the files it serves (webfsd) had
  // another state in the first run than in every later one. A kernel
  // older than 5.12 has no mount_setattr: the runs may differ there, which
  // the nondeterminism check reports.
  mount_attr noatime{};
  noatime.attr_set = MOUNT_ATTR_NOATIME;
  noatime.attr_clr = MOUNT_ATTR__ATIME;
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &noatime,
              sizeof noatime) != 0 &&
      errno != ENOSYS)
    return {InitStage::kNoatime, errno};
  if (mount("cmc-runs", Sandbox::kRunsDirectory, "tmpfs", MS_NOSUID | MS_NODEV,
            "mode=1777") != 0)
    return {InitStage::kTmpfs, errno};
  // cmc's /proc shows cmc's PID namespace: /proc/2 there is another
  // process than the target's getpid().
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            nullptr) != 0)
    return {InitStage::kProc, errno};
  return {};
}

struct InitPipes {
  int from_cmc;
  int report;
};

// The init: it runs on a stack of its own in cmc's memory (CLONE_VM; a fork
// would keep a copy of every page cmc has, and make cmc copy each page it
// writes next), with the thread-local storage of the thread that made it.
// So only system calls, made with syscall(2): glibc's read and write are
// cancellation points that write to that thread's control block, and a
// sanitizer's interceptors would use locks other threads of cmc hold (see
// tracee.cc's ChildPlan).
[[noreturn]] void init_main(int from_cmc, int report) {
  // Out of cmc's session and process group: a terminal's Ctrl-C is cmc's.
  syscall(SYS_setsid);
  const std::uint64_t all = ~std::uint64_t{0}; // the kernel's sigset_t
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, nullptr, sizeof all);
  // Ignoring SIGCHLD reaps the orphans the kernel gives it at their exit.
  // The kernel's struct sigaction: handler, flags, restorer, mask.
  const std::array<std::uintptr_t, 4> reap{
      reinterpret_cast<std::uintptr_t>(SIG_IGN), 0, 0, 0};
  syscall(SYS_rt_sigaction, SIGCHLD, reap.data(), nullptr, sizeof all);
  const InitReport done = set_up_init(from_cmc, report);
  syscall(SYS_write, report, &done, sizeof done);
  syscall(SYS_close, report);
  // exit_group itself, not _exit: TSan's _exit finalizes its runtime, in
  // an init forked behind its back (it outlived cmc, past ~Sandbox's wait).
  if (done.error != 0)
    syscall(SYS_exit_group, 1);
  // cmc never writes: read returns at EOF, when cmc has died or let go.
  char byte = 0;
  while (syscall(SYS_read, from_cmc, &byte, 1) > 0) {
  }
  syscall(SYS_exit_group, 0);
  __builtin_unreachable();
}

int init_entry(void *pipes) {
  const auto *ends = static_cast<const InitPipes *>(pipes);
  init_main(ends->from_cmc, ends->report);
}

// The init's stack: never freed, as the init may outlive its Sandbox (by
// the second ~Sandbox waits) and even cmc's last thread.
std::span<char> init_stack() {
  constexpr std::size_t kSize = std::size_t{64} * 1024;
  void *stack = mmap(nullptr, kSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return {};
  return {static_cast<char *>(stack), kSize};
}

// clone3 whose child calls entry(argument) on the stack args names (the
// caller's, copied, with none) and never returns: a C++ function cannot
// return on two stacks.
long clone3_calling(clone_args &args, int (*entry)(void *), void *argument) {
  long result = SYS_clone3;
  asm volatile("syscall\n\t"
               "test %%rax, %%rax\n\t"
               "jnz 1f\n\t"
               "and $-16, %%rsp\n\t"
               "mov %[argument], %%rdi\n\t"
               "call *%[entry]\n\t"
               "ud2\n"
               "1:"
               : "+a"(result)
               : "D"(&args),
                 "S"(sizeof args), [entry] "r"(entry), [argument] "r"(argument)
               : "rcx", "r11", "memory");
  return result;
}

int home_pid_namespace() {
  static const UniqueFd home(::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
  return home.get();
}

Result<UniqueFd> open_namespace(pid_t init, const char *name) {
  const std::string path = fmt::format("/proc/{}/ns/{}", init, name);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return system_error(fmt::format("cannot open {}", path), errno);
  return fd;
}

} // namespace

int close_inherited(int keep_a, int keep_b) {
  const int low = std::min(keep_a, keep_b);
  const int high = std::max(keep_a, keep_b);
  unsigned first = 3;
  for (const int keep : {low, high}) {
    if (keep < static_cast<int>(first))
      continue;
    if (static_cast<unsigned>(keep) > first &&
        close_range(first, static_cast<unsigned>(keep) - 1, 0) != 0)
      return -1;
    first = static_cast<unsigned>(keep) + 1;
  }
  return close_range(first, ~0U, 0);
}

int enter_sandbox(int mount_namespace) {
  if (setns(mount_namespace, CLONE_NEWNS) != 0)
    return errno;
  // The kernel gives a new process the next free pid after its
  // namespace's last one (ns_last_pid, which only a process inside may
  // set): from the caller's own on, whatever earlier runs left it at.
  std::array<char, 16> digits{};
  std::size_t at = digits.size();
  for (auto pid = static_cast<unsigned>(getpid());
       at == digits.size() || pid != 0; pid /= 10)
    digits[--at] = static_cast<char>('0' + pid % 10);
  const auto fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD,
                                           "/proc/sys/kernel/ns_last_pid",
                                           O_WRONLY | O_CLOEXEC));
  if (fd < 0)
    return errno;
  const auto length = static_cast<long>(digits.size() - at);
  const int error =
      syscall(SYS_write, fd, digits.data() + at, length) == length ? 0 : errno;
  syscall(SYS_close, fd);
  return error;
}

namespace {

// Every sandbox of the process, owned by the process, not the thread: TBB's
// threads are not joined at exit, and their thread_local objects not
// destroyed.
struct Sandboxes {
  std::mutex mutex;
  std::vector<std::unique_ptr<Sandbox>> every;
};

Sandboxes &sandboxes() {
  static Sandboxes all;
  return all;
}

} // namespace

Result<Sandbox *> Sandbox::of_this_thread(Use use) {
  thread_local std::array<Sandbox *, 2> of_use{};
  Sandbox *&sandbox = of_use.at(static_cast<std::size_t>(use));
  if (sandbox == nullptr) {
    auto made = create();
    if (!made)
      return made.error();
    sandbox = made->get();
    const std::lock_guard lock(sandboxes().mutex);
    sandboxes().every.push_back(std::move(*made));
  }
  return sandbox;
}

std::vector<pid_t> Sandbox::inits() {
  const std::lock_guard lock(sandboxes().mutex);
  std::vector<pid_t> pids;
  for (const auto &sandbox : sandboxes().every)
    pids.push_back(sandbox->init_);
  return pids;
}

Sandbox::~Sandbox() {
  alive_.reset();
  pollfd ended{init_pidfd_.get(), POLLIN, 0};
  if (poll(&ended, 1, 1000) == 1)
    waitpid(init_, nullptr, WNOHANG);
}

Result<std::unique_ptr<Sandbox>> Sandbox::create() {
  std::array<int, 2> alive{};
  std::array<int, 2> report{};
  if (pipe2(alive.data(), O_CLOEXEC) != 0)
    return system_error("cannot make the sandbox's pipe", errno);
  UniqueFd alive_read(alive[0]);
  UniqueFd alive_write(alive[1]);
  if (pipe2(report.data(), O_CLOEXEC) != 0)
    return system_error("cannot make the sandbox's pipe", errno);
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  InitPipes pipes{alive_read.get(), report_write.get()};
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  const std::span<char> stack = init_stack();
  const pid_t init =
      stack.empty()
          ? -1
          : clone(init_entry, stack.data() + stack.size(),
                  CLONE_VM | CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, &pipes);
#else
  // A sanitizer's interceptors (ASan, TSan), called from a process that shares
  // cmc's memory, corrupt its shadow state: sanitizer builds fork.
  const auto init = static_cast<pid_t>(
      syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, nullptr, nullptr,
              nullptr, 0));
  if (init == 0)
    init_entry(&pipes);
#endif
  if (init < 0)
    return system_error("cannot start the sandbox of the targets (cmc needs "
                        "root or CAP_SYS_ADMIN): clone",
                        errno);
  alive_read.reset();
  report_write.reset();
  InitReport done{};
  if (read(report_read.get(), &done, sizeof done) != sizeof done)
    return Error{"the sandbox of the targets ended as it started"};
  if (done.error != 0)
    return system_error(
        fmt::format("cannot start the sandbox of the targets: {} failed",
                    init_stage_name(done.stage)),
        done.error);
  auto pid_ns = open_namespace(init, "pid");
  if (!pid_ns)
    return pid_ns.error();
  auto mount_ns = open_namespace(init, "mnt");
  if (!mount_ns)
    return mount_ns.error();
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, init, 0)));
  if (!pidfd.valid())
    return system_error("cannot open the sandbox's init: pidfd_open", errno);
  return std::unique_ptr<Sandbox>(
      new Sandbox(init, std::move(alive_write), std::move(*pid_ns),
                  std::move(*mount_ns), std::move(pidfd)));
}

std::string Sandbox::outside(const std::string &path) const {
  return fmt::format("/proc/{}/root{}", init_, path);
}

Result<pid_t> Sandbox::spawn_in(int (*entry)(void *), void *argument,
                                std::span<char> stack) const {
  if (home_pid_namespace() < 0)
    return system_error("cannot open cmc's own PID namespace", errno);
  // Only the children of this thread are born in the namespace.
  if (setns(pid_ns_.get(), CLONE_NEWPID) != 0)
    return system_error("cannot enter the sandbox's PID namespace", errno);
  pid_t wanted = kTargetPid;
  clone_args args{};
  args.exit_signal = SIGCHLD;
  args.set_tid = reinterpret_cast<std::uintptr_t>(&wanted);
  args.set_tid_size = 1;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  args.flags = CLONE_VM | CLONE_VFORK;
  args.stack = reinterpret_cast<std::uintptr_t>(stack.data());
  args.stack_size = stack.size();
#else
  // A sanitizer's interceptors (ASan, TSan), called from a child that shares
  // cmc's memory, corrupt the parent's shadow state: sanitizer builds fork.
  (void)stack;
#endif
  long pid = clone3_calling(args, entry, argument);
  if (pid == -EEXIST) {
    args.set_tid = 0;
    args.set_tid_size = 0;
    pid = clone3_calling(args, entry, argument);
  }
  CMC_CHECK(setns(home_pid_namespace(), CLONE_NEWPID) == 0,
            "returning to cmc's PID namespace");
  if (pid < 0)
    return system_error(fmt::format("cannot start a process in the sandbox "
                                    "(its init, pid {}, may have died): clone3",
                                    init_),
                        static_cast<int>(-pid));
  return static_cast<pid_t>(pid);
}

} // namespace cmc::tracer
