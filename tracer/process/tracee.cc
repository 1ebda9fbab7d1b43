#include "tracer/process/tracee.h"

#include <csignal>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "tracer/process/backtrace.h"
#include "tracer/process/ptrace_unsafe.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/sandbox/sandbox.h"
#include "util/signal_name.h"

namespace cmc::tracer {
namespace {

// The child's set-up steps, for the report of the one that failed.
enum class Stage : int {
  kSandbox,
  kDevNull,
  kWorkdir,
  kMounts,
  kPersonality,
  kNetns,
  kLoopback,
  kTraceMe,
  kSeccomp,
  kExec,
};

const char *stage_name(Stage stage) {
  static constexpr std::array kNames{
      "entering cmc's sandbox (its mount namespace and /proc)",
      "redirecting stdio and closing inherited descriptors",
      "entering its private working directory",
      "mounting its --writable copies in a mount namespace of its own",
      "disabling ASLR (personality)",
      "entering its network namespace (cmc needs root or CAP_SYS_ADMIN)",
      "bringing up loopback in its network namespace",
      "PTRACE_TRACEME",
      "installing the seccomp filter",
      "execve",
  };
  return kNames.at(static_cast<std::size_t>(stage));
}

struct ChildFailure {
  Stage stage;
  int error;
};

// Everything the child needs, prepared before fork: after fork only
// async-signal-safe system calls are allowed (cmc has other threads). Those
// that sanitizers intercept (write, open, close, dup2, prctl, ptrace,
// sigprocmask, socket, ioctl, _exit) are made with syscall(2): in a
// sanitizer build the child is a copy of cmc that the sanitizer never saw
// made, whose locks other threads may hold forever.
struct ChildPlan {
  const char *program;
  std::vector<char *> argv;
  char *const *envp;
  const char *workdir; // as the target sees it, in the sandbox
  int mount_ns;        // the sandbox's
  // Bind mounts: copy over path, in a mount namespace of its own.
  std::vector<std::pair<const char *, const char *>> mounts;
  int dev_null;
  int output; // its stdout and stderr, unless show_output
  int report_fd;
  bool aslr;
  bool show_output;
  int netns;
  const sock_fprog *filter;
};

[[noreturn]] void child_fail(const ChildPlan &plan, Stage stage, int error) {
  const ChildFailure failure{stage, error};
  syscall(SYS_write, plan.report_fd, &failure, sizeof failure);
  syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// A new mount namespace copies cmc's mounts, and with them their
// propagation: on a shared "/" (systemd's default) a bind mount would reach
// cmc's namespace too, unless made private first.
void mount_copies(const ChildPlan &plan) {
  if (unshare(CLONE_NEWNS) != 0 ||
      mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    child_fail(plan, Stage::kMounts, errno);
  for (const auto &[copy, path] : plan.mounts)
    if (mount(copy, path, nullptr, MS_BIND | MS_REC, nullptr) != 0)
      child_fail(plan, Stage::kMounts, errno);
}

// The kernel numbers a new process with the pid after the last it gave by
// counting; set_tid, which made the target pid 2 of its namespace, does
// not move that count, which earlier runs in the namespace left anywhere.
// Set to the target's own pid, the processes it starts are numbered alike
// in every run (a server keeps its children's pids). Without the file the
// nondeterminism check names what differs.
void reset_pid_count() {
  static_assert(Sandbox::kTargetPid == 2);
  const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/sys/kernel/ns_last_pid",
                          O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  syscall(SYS_write, fd, "2", 1);
  syscall(SYS_close, fd);
}

[[noreturn]] void child_main(const ChildPlan &plan) {
  // Runs on its own stack in cmc's memory (CLONE_VM | CLONE_VFORK, as
  // posix_spawn does): no page tables are copied, and cmc's thread waits
  // until the exec or the failure.
  syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
  // Its own process group: a terminal's Ctrl-C reaches cmc, not the target,
  // and cmc can kill everything the target started.
  setpgid(0, 0);
  const std::uint64_t none = 0; // the kernel's sigset_t
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none);
  if (const int error = enter_sandbox(plan.mount_ns); error != 0)
    child_fail(plan, Stage::kSandbox, error);
  reset_pid_count();
  if (syscall(SYS_dup2, plan.dev_null, STDIN_FILENO) < 0 ||
      (!plan.show_output &&
       (syscall(SYS_dup2, plan.output, STDOUT_FILENO) < 0 ||
        syscall(SYS_dup2, plan.output, STDERR_FILENO) < 0)))
    child_fail(plan, Stage::kDevNull, errno);
  // Nothing cmc inherited reaches the target: it starts with descriptors
  // 0-2 only, as under a service manager. They are closed now, not at the
  // exec: the child's copy of cmc's table may hold another worker's
  // duplicate of its target's listening socket, which would keep that
  // port taken for the worker's next target.
  if (close_inherited(plan.report_fd, plan.netns) != 0)
    child_fail(plan, Stage::kDevNull, errno);
  if (chdir(plan.workdir) != 0)
    child_fail(plan, Stage::kWorkdir, errno);
  if (!plan.mounts.empty())
    mount_copies(plan);
  if (!plan.aslr &&
      personality(static_cast<unsigned long>(personality(0xffffffff)) |
                  ADDR_NO_RANDOMIZE) < 0)
    child_fail(plan, Stage::kPersonality, errno);
  if (plan.netns >= 0) {
    if (setns(plan.netns, CLONE_NEWNET) != 0)
      child_fail(plan, Stage::kNetns, errno);
  } else {
    if (unshare(CLONE_NEWNET) != 0)
      child_fail(plan, Stage::kNetns, errno);
    if (const int error = bring_up_loopback(); error != 0)
      child_fail(plan, Stage::kLoopback, error);
  }
  if (const int rc = sys::child_trace_me(); rc != 0)
    child_fail(plan, Stage::kTraceMe, -rc);
  if (const int rc = sys::child_install_filter(*plan.filter); rc != 0)
    child_fail(plan, Stage::kSeccomp, -rc);
  execve(plan.program, plan.argv.data(), plan.envp);
  child_fail(plan, Stage::kExec, errno);
}

int child_entry(void *plan) { child_main(*static_cast<ChildPlan *>(plan)); }

Error child_error(const LaunchSpec &spec, int report_fd, WaitStatus status) {
  ChildFailure failure{};
  if (read(report_fd, &failure, sizeof failure) == sizeof failure)
    return system_error(fmt::format("cannot start {}: {} failed", spec.program,
                                    stage_name(failure.stage)),
                        failure.error);
  return Error{fmt::format("cannot start {}: it ended before exec (status "
                           "{:#x})",
                           spec.program,
                           status.exited() ? status.exit_status()
                                           : status.term_signal())};
}

// cmc's environment without what would make the target act as a service
// manager's child: socket activation (LISTEN_*) and readiness
// notification (NOTIFY_SOCKET) meant for cmc itself; and with
// LD_BIND_NOW=1. Bound lazily, ld.so resolves a function at its first
// call through the PLT: it writes the GOT slot and counts the lookup in
// _rtld_global, and a step that calls a function first differs from one
// that does not in memory no later step reads. Bound at start, as a
// binary linked -z now is, the steps leave neither.
std::vector<char *> target_environment() {
  static std::string bind_now = "LD_BIND_NOW=1";
  std::vector<char *> envp;
  for (char **entry = environ; *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    if (!variable.starts_with("LISTEN_") &&
        !variable.starts_with("NOTIFY_SOCKET=") &&
        !variable.starts_with("LD_BIND_NOW="))
      envp.push_back(*entry);
  }
  envp.push_back(bind_now.data());
  envp.push_back(nullptr);
  return envp;
}

constexpr int kOutputPipeSize = 1 << 20;

// The text of a /proc file of the target's: a gone target is kTargetGone.
Result<std::string> read_proc(const std::string &path) {
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return proc_error("cannot open " + path, errno);
  std::string text;
  std::array<char, 4096> buffer{};
  ssize_t got = 0;
  while ((got = ::read(fd.get(), buffer.data(), buffer.size())) > 0)
    text.append(buffer.data(), static_cast<std::size_t>(got));
  if (got < 0)
    return proc_error("cannot read " + path, errno);
  return text;
}

// The pipe of the target's stdout and stderr: [0] cmc's end, [1] the
// target's.
Result<std::array<UniqueFd, 2>> output_pipe() {
  std::array<int, 2> output{};
  // Only cmc's end is non-blocking: the target's stdout and stderr block
  // as a pipe to a reader would (a target may check, as some loggers do).
  if (pipe2(output.data(), O_CLOEXEC) != 0)
    return system_error("cannot prepare the launch", errno);
  std::array<UniqueFd, 2> ends{UniqueFd(output[0]), UniqueFd(output[1])};
  if (fcntl(ends[0].get(), F_SETFL, O_NONBLOCK) != 0)
    return system_error("cannot prepare the launch", errno);
  // OutputDrain reads the pipe as the target writes; a larger pipe wakes
  // it less often.
  fcntl(ends[1].get(), F_SETPIPE_SZ, kOutputPipeSize);
  return ends;
}

// The plan's bind mounts and argv, pointing into files and spec.
void add_mounts_and_argv(ChildPlan &plan, const RunFiles &files,
                         const LaunchSpec &spec) {
  for (const WritableCopy &mount : files.mounts())
    plan.mounts.emplace_back(mount.copy.c_str(), mount.path.c_str());
  for (const std::string &arg : spec.argv)
    plan.argv.push_back(const_cast<char *>(arg.c_str()));
  plan.argv.push_back(nullptr);
}

// The files a run starts on: those given (a crashed run's), else new ones.
Result<RunFiles> run_files(const LaunchSpec &spec, const Sandbox &sandbox,
                           std::optional<RunFiles> given) {
  if (given)
    return std::move(*given);
  return RunFiles::create(spec.writable, sandbox, spec.durable);
}

} // namespace

Tracee::Tracee(pid_t pid)
    : pid_(pid), focus_(pid), lease_(std::make_unique<Watchdog::Lease>(pid)) {}

Tracee::~Tracee() {
  kill_and_reap();
  files_.reset();
}

RunFiles Tracee::crash() {
  kill_and_reap();
  RunFiles files = std::move(*files_);
  files_.reset();
  return files;
}

bool Tracee::still_stopped(pid_t tid) const { return sys::still_stopped(tid); }

Result<std::vector<executor::Frame>>
Tracee::backtrace(std::size_t max_frames) const {
  auto backtracer = Backtracer::attach(focus_);
  if (!backtracer)
    return backtracer.error();
  return backtracer->unwind(max_frames);
}

namespace {

// Waits for the end of tid, killed (a stop before it is passed over).
void reap(pid_t tid) {
  while (true) {
    auto status = sys::wait_for(tid);
    if (!status || status->gone())
      return;
  }
}

} // namespace

void Tracee::kill_and_reap() {
  for (const pid_t pid : adopted_)
    kill(pid, SIGKILL);
  // Process groups, only while their leaders' ids are known taken (a
  // second call, from the destructor after crash(), finds them reaped).
  std::vector<pid_t> groups;
  if (!reaped_) {
    groups = left_;
    groups.push_back(pid_);
    for (const pid_t group : groups)
      kill(-group, SIGKILL);
    kill(pid_, SIGKILL);
  }
  // A killed tracee stays a zombie until reaped, so its pid cannot be
  // reused while the watchdog still knows it.
  lease_.reset();
  // Reaped parents first (processes in order of creation), each one's
  // threads before its leader, whose end the kernel reports last. A
  // process that cmc reaps while its parent lives becomes that parent's
  // zombie, and the parent's exit frees its pid only after it has told
  // cmc that it ended: the next run's first child could find that pid
  // still taken and get another (nginx's worker, pid 3 or 4). Reaped once
  // its parent has ended, a process is the sandbox init's, which ignores
  // SIGCHLD: cmc's own waitpid frees its pid.
  std::vector<pid_t> leaders;
  if (!reaped_)
    leaders.push_back(pid_);
  for (const pid_t tid : adopted_)
    if (tid != pid_ && group_of(tid) == tid)
      leaders.push_back(tid);
  for (const pid_t leader : leaders) {
    for (const pid_t tid : adopted_)
      if (tid != leader && group_of(tid) == leader)
        reap(tid);
    reap(leader);
  }
  // The threads of a first process reaped already, then what the target
  // started that cmc had not adopted yet: a process group keeps its
  // leader's id taken until they are reaped.
  for (const pid_t tid : adopted_)
    if (std::ranges::find(leaders, group_of(tid)) == leaders.end())
      reap(tid);
  for (const pid_t group : groups)
    while (sys::wait_for_group(group, true)) {
    }
  reaped_ = true;
}

Result<std::unique_ptr<Tracee>> Tracee::spawn(const LaunchSpec &spec,
                                              const SeccompFilter &filter,
                                              std::optional<RunFiles> given) {
  static const UniqueFd dev_null(open("/dev/null", O_RDWR | O_CLOEXEC));
  // cmc never changes its own environment: built once, for every spawn.
  static const std::vector<char *> environment = target_environment();
  std::array<int, 2> report{};
  if (!dev_null.valid() || pipe2(report.data(), O_CLOEXEC) != 0)
    return system_error("cannot prepare the launch", errno);
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  // Built before fork: the child must not allocate.
  std::vector<sock_filter> built;
  sock_fprog built_fprog{};
  if (filter.program == nullptr) {
    built = filter.build(report_write.get());
    built_fprog = {static_cast<unsigned short>(built.size()), built.data()};
  }
  // A private working directory, new for every run, so no run sees the
  // files an earlier one left; the program is found from cmc's own.
  auto sandbox = Sandbox::of_this_thread(spec.aside ? Sandbox::Use::kAside
                                                    : Sandbox::Use::kTargets);
  if (!sandbox)
    return sandbox.error();
  auto files = run_files(spec, **sandbox, std::move(given));
  if (!files)
    return files.error();
  const std::string program = std::filesystem::absolute(spec.program);
  auto output = output_pipe();
  if (!output)
    return output.error();
  auto &[output_read, output_write] = *output;
  ChildPlan plan{program.c_str(),
                 {},
                 environment.data(),
                 files->workdir().c_str(),
                 (*sandbox)->mount_namespace(),
                 {},
                 dev_null.get(),
                 output_write.get(),
                 report_write.get(),
                 spec.aslr,
                 spec.show_output,
                 spec.netns,
                 filter.program != nullptr ? filter.program : &built_fprog};
  add_mounts_and_argv(plan, *files, spec);

  // The child's stack until it execs; one per thread, reused.
  alignas(16) thread_local std::array<char, std::size_t{64} * 1024> stack;
  auto pid = (*sandbox)->spawn_in(child_entry, &plan, stack);
  if (!pid)
    return pid.error();
  std::unique_ptr<Tracee> tracee(new Tracee(*pid));
  tracee->files_.emplace(std::move(*files));
  tracee->output_ =
      std::make_unique<OutputDrain::Registration>(std::move(output_read));
  report_write.reset();
  output_write.reset();
  if (auto started = tracee->await_exec(spec, report_read.get()); !started)
    return started.error();
  return tracee;
}

Result<void> Tracee::await_exec(const LaunchSpec &spec, int report_fd) {
  // Without options yet, the successful execve stops the child with a plain
  // SIGTRAP before the target's first instruction.
  auto status = sys::wait_for(pid_);
  if (!status)
    return status.error();
  if (status->gone()) {
    reaped_ = true;
    return child_error(spec, report_fd, *status);
  }
  if (!status->stopped() || status->stop_signal() != SIGTRAP)
    return Error{fmt::format("cannot start {}: unexpected stop {} after exec",
                             spec.program, signal_name(status->stop_signal()))};
  if (auto set = sys::set_options(pid_); !set)
    return set.error();
  auto pidfd = sys::pidfd_open(pid_);
  if (!pidfd)
    return pidfd.error();
  pidfd_ = std::move(*pidfd);
  return {};
}

void Tracee::resume(int signal, bool to_syscall_stop) {
  sys::resume(focus_, signal, to_syscall_stop);
}

namespace {

// The events that a target's wait_scattered() took for another target of
// the same thread of cmc's (its tracer), which wait() hands it.
thread_local std::vector<std::pair<pid_t, WaitStatus>> kept_events;

} // namespace

Result<std::optional<WaitStatus>> Tracee::wait(bool block) {
  if (ended_) {
    focus_ = pid_;
    return std::optional(*std::exchange(ended_, std::nullopt));
  }
  std::optional<std::pair<pid_t, WaitStatus>> event;
  const auto kept = std::ranges::find_if(
      kept_events, [this](const auto &entry) { return owns(entry.first); });
  if (kept != kept_events.end()) {
    event = *kept;
    kept_events.erase(kept);
  } else if (!left_.empty()) {
    auto next = wait_scattered(block);
    if (!next)
      return next.error();
    event = *next;
  } else {
    // The target's threads and processes share its process group (set at
    // launch), which no other tracee of cmc's is in.
    auto next = sys::wait_for_group(pid_, block);
    if (!next)
      return next.error();
    if (*next)
      event.emplace((*next)->tid, (*next)->status);
  }
  if (!event)
    return std::optional<WaitStatus>();
  focus_ = event->first;
  if (focus_ == pid_ && event->second.gone())
    reaped_ = true;
  return std::optional(event->second);
}

Result<std::optional<std::pair<pid_t, WaitStatus>>>
Tracee::wait_scattered(bool block) {
  while (true) {
    auto next = sys::wait_for_own(block);
    if (!next)
      return next.error();
    if (!*next)
      return std::optional<std::pair<pid_t, WaitStatus>>();
    std::pair<pid_t, WaitStatus> event{(*next)->tid, (*next)->status};
    if (owns(event.first))
      return std::optional(event);
    kept_events.push_back(event);
  }
}

bool Tracee::owns(pid_t tid) const {
  if (tid == pid_ || groups_.contains(tid))
    return true;
  // A task not adopted yet: a thread of a process of the target's, or a
  // process one of them started (its parent, by /proc/PID/status).
  auto status = read_proc(fmt::format("/proc/{}/status", tid));
  if (!status)
    return false;
  const auto field = [&](std::string_view name) -> pid_t {
    const std::size_t line = status->find(fmt::format("\n{}:\t", name));
    return line == std::string::npos
               ? 0
               : std::atoi(status->c_str() + line + name.size() + 3);
  };
  const pid_t group = field("Tgid");
  const pid_t owner = group == tid ? field("PPid") : group;
  return owner == pid_ ||
         std::ranges::any_of(groups_, [owner](const auto &entry) {
           return entry.second == owner;
         });
}

void Tracee::leaves_group(pid_t process) {
  left_.push_back(process);
  if (lease_)
    lease_->add(process);
}

Result<WaitStatus> Tracee::resume_and_wait(int signal, bool to_syscall_stop) {
  resume(signal, to_syscall_stop);
  auto status = wait();
  if (!status)
    return status.error();
  return **status;
}

Result<pid_t> Tracee::namespace_tid(pid_t tid) const {
  if (const auto known = namespace_tids_.find(tid);
      known != namespace_tids_.end())
    return known->second;
  // "NSpid:\t<in cmc's namespace>\t<in the sandbox's>\n"
  auto status = read_proc(fmt::format("/proc/{}/status", tid));
  if (!status)
    return status.error();
  const std::size_t line = status->find("\nNSpid:");
  const std::size_t end = status->find('\n', line + 1);
  const std::size_t last = status->find_last_of(" \t", end);
  if (line == std::string::npos || end == std::string::npos ||
      last == std::string::npos || last < line)
    return Error{fmt::format("cannot find NSpid in /proc/{}/status", tid)};
  const pid_t inside = std::atoi(status->c_str() + last + 1);
  namespace_tids_.emplace(tid, inside);
  return inside;
}

Result<pid_t> Tracee::thread_group(pid_t tid) const {
  // Asked of the task itself, not of the target's task/ directory, where a
  // process it started and a thread that ended are both missing.
  auto status = read_proc(fmt::format("/proc/{}/status", tid));
  if (!status)
    return status.error();
  const std::size_t line = status->find("\nTgid:\t");
  if (line == std::string::npos)
    return Error{fmt::format("cannot find Tgid in /proc/{}/status", tid)};
  return static_cast<pid_t>(std::atoi(status->c_str() + line + 7));
}

void Tracee::adopt(pid_t tid, pid_t group) {
  adopted_.push_back(tid);
  groups_[tid] = group;
}

void Tracee::forget(pid_t tid) {
  std::erase(adopted_, tid);
  std::erase(left_, tid);
  namespace_tids_.erase(tid);
  groups_.erase(tid);
  pidfds_.erase(tid);
}

Result<Registers> Tracee::registers() const {
  auto regs = sys::registers(focus_);
  if (!regs)
    return regs.error();
  return Registers(*regs);
}

Result<void> Tracee::set_registers(const Registers &regs) {
  return sys::set_registers(focus_, regs.raw());
}

Result<std::vector<std::byte>> Tracee::extended_registers() const {
  return sys::extended_registers(focus_);
}

Result<void> Tracee::set_extended_registers(std::span<const std::byte> area) {
  return sys::set_extended_registers(focus_, area);
}

Result<siginfo_t> Tracee::signal_info() const {
  return sys::signal_info(focus_);
}

Result<void> Tracee::set_signal_info(const siginfo_t &info) {
  return sys::set_signal_info(focus_, info);
}

Result<void> Tracee::send_signal(pid_t tid, int signal) {
  return sys::send_signal(group_of(tid), tid, signal);
}

Result<void> Tracee::write(std::uint64_t address,
                           std::span<const std::byte> bytes) {
  return sys::write_memory(process(), address, bytes);
}

Result<void> Tracee::patch_code(std::uint64_t address,
                                std::span<const std::byte> bytes) {
  return sys::poke_memory(focus_, address, bytes);
}

Result<long> Tracee::inject_syscall(std::uint64_t syscall_at, long nr,
                                    const std::array<std::uint64_t, 3> &args) {
  auto saved = registers();
  if (!saved)
    return saved.error();
  Registers call = *saved;
  call.set_to_enter(syscall_at, nr);
  for (std::size_t i = 0; i < args.size(); ++i)
    call.set_arg(i, args[i]);
  if (auto set = set_registers(call); !set)
    return set.error();
  auto status = sys::single_step(focus_);
  // Under observing_program the call stops at seccomp first; stepping on
  // from there runs it.
  while (status && status->seccomp_stop())
    status = sys::single_step(focus_);
  if (!status)
    return status.error();
  if (status->gone())
    return died_in_call(*status);
  auto after = registers();
  if (!after)
    return after.error();
  if (auto restored = set_registers(*saved); !restored)
    return restored.error();
  return after->result();
}

Error Tracee::died_in_call(const WaitStatus &status) {
  // Reaped here: wait() reports the leader's end, as it would have.
  if (focus_ == pid_) {
    reaped_ = true;
    ended_ = status;
  }
  return Error{"the target died in a system call cmc made for it",
               ErrorKind::kTargetGone};
}

Result<void> Tracee::own_stop(bool (WaitStatus::*expected)() const,
                              const char *what) {
  auto status = sys::wait_for(focus_);
  if (!status)
    return status.error();
  if (status->gone())
    return died_in_call(*status);
  if (!((*status).*expected)())
    return Error{fmt::format("thread {} stopped otherwise than at {} in a "
                             "system call cmc made for it",
                             focus_, what)};
  return {};
}

Result<long>
Tracee::call_at_seccomp_stop(const Registers &entered, long nr,
                             const std::array<std::uint64_t, 4> &args) {
  auto saved = registers();
  if (!saved)
    return saved.error();
  // After a seccomp stop the kernel reads the call's number and arguments
  // again from the registers (and runs the filter again, which lets a
  // traced call through this time).
  Registers call = *saved;
  call.set_syscall_number(nr);
  for (std::size_t i = 0; i < args.size(); ++i)
    call.set_arg(i, args[i]);
  if (auto set = set_registers(call); !set)
    return set.error();
  sys::resume(focus_, 0, true);
  if (auto stopped = own_stop(&WaitStatus::syscall_stop, "its exit"); !stopped)
    return stopped.error();
  auto after = registers();
  if (!after)
    return after.error();
  Registers again = entered;
  again.set_to_enter(entered.syscall_site(), entered.syscall_number());
  if (auto set = set_registers(again); !set)
    return set.error();
  sys::resume(focus_, 0, false);
  if (auto stopped = own_stop(&WaitStatus::seccomp_stop, "the seccomp stop");
      !stopped)
    return stopped.error();
  if (auto restored = set_registers(*saved); !restored)
    return restored.error();
  return after->result();
}

Result<bool> Tracee::at_syscall_exit() const {
  return sys::at_syscall_exit(focus_);
}

Result<unsigned long> Tracee::event_message() const {
  return sys::event_message(focus_);
}

Result<void> Tracee::read(std::span<const iovec> remote,
                          std::span<std::byte> local) const {
  return sys::read_memory(process(), remote, local);
}

std::vector<pid_t> Tracee::processes() const {
  std::vector<pid_t> processes{pid_};
  for (const auto &[tid, group] : groups_)
    if (tid == group && group != pid_)
      processes.push_back(group);
  return processes;
}

std::optional<UniqueFd> Tracee::duplicate_fd_of(pid_t process, int fd) const {
  if (process == pid_)
    return sys::pidfd_getfd(pidfd_.get(), fd);
  auto found = pidfds_.find(process);
  if (found == pidfds_.end()) {
    auto opened = sys::pidfd_open(process);
    if (!opened)
      return std::nullopt;
    found = pidfds_.emplace(process, std::move(*opened)).first;
  }
  return sys::pidfd_getfd(found->second.get(), fd);
}

Result<std::vector<decoder::Mapping>> Tracee::maps() const {
  auto text = proc_file("maps");
  if (!text)
    return text.error();
  return decoder::parse_maps(*text);
}

Result<std::string> Tracee::proc_file(const char *leaf) const {
  return read_proc(fmt::format("/proc/{}/{}", process(), leaf));
}

} // namespace cmc::tracer
