#include "tracer/session.h"

#include <linux/futex.h>
#include <netinet/in.h>

#include <cerrno>
#include <csignal>
#include <ctime>

#include <xxhash.h>

#include <vector>

#include <fmt/format.h>

#include "tracer/input_wait.h"
#include "tracer/syscall_table.h"
#include "tracer/watchdog.h"
#include "util/log.h"

namespace cmc::tracer {
namespace {

Error new_task_error(int event, unsigned long pid) {
  const char *what = event == PTRACE_EVENT_CLONE ? "a thread" : "a process";
  return Error{
      fmt::format("the target started {} (pid {}); cmc checks single-threaded, "
                  "single-process servers for now",
                  what, pid)};
}

} // namespace

Result<std::optional<Fault>> Session::run_until_quiescent() {
  if (waiting_) {
    auto still = still_waiting();
    if (!still)
      return still.error();
    if (*still)
      return std::optional<Fault>();
    waiting_.reset();
  }
  int signal = 0;
  while (true) {
    auto status = tracee_.resume_and_wait(signal, awaiting_exit_);
    signal = 0;
    if (!status)
      return status.error();
    if (status->gone())
      return std::optional(fault_of(*status));
    if (status->syscall_stop()) {
      if (auto returned = on_syscall_stop(); !returned)
        return returned.error();
      continue;
    }
    if (status->seccomp_stop()) {
      auto quiescent = on_seccomp_stop();
      if (!quiescent)
        return quiescent.error();
      if (*quiescent)
        return std::optional<Fault>();
      continue;
    }
    const int event = status->ptrace_event();
    if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
        event == PTRACE_EVENT_VFORK) {
      auto pid = tracee_.event_message();
      if (pid)
        tracee_.adopt(static_cast<pid_t>(*pid));
      return new_task_error(event, pid ? *pid : 0);
    }
    if (event == PTRACE_EVENT_EXEC) {
      // A new program, with a new vDSO and auxiliary vector.
      if (watcher_ != nullptr)
        watcher_->new_program();
      if (auto controlled = take_control(); !controlled)
        return controlled.error();
      continue;
    }
    // A signal-delivery stop: pass the signal on unless cmc answers it.
    // Other event stops resume with no signal.
    if (event == 0 && !status->group_stop()) {
      auto deliver = on_signal(status->stop_signal());
      if (!deliver)
        return deliver.error();
      signal = *deliver;
    }
  }
}

Result<void> Session::advance_clock(std::chrono::nanoseconds by) {
  environment_.clock().advance(by);
  if (auto fired =
          environment_.timers().fire_due(tracee_, environment_.clock());
      !fired)
    return fired;
  if (!waiting_ || !waiting_->deadline ||
      *waiting_->deadline > environment_.clock().elapsed())
    return {};
  const Waiting fired = *waiting_;
  waiting_.reset();
  if (fired.result_at_deadline)
    return skip(fired.regs, *fired.result_at_deadline);
  return expire(tracee_, *fired.call, fired.regs);
}

std::uint64_t Session::hidden_state() const {
  std::vector<std::int64_t> words{environment_.clock().elapsed().count(), -1};
  if (waiting_ && waiting_->deadline)
    words[1] = waiting_->deadline->count();
  environment_.timers().for_each([&](int fd, std::chrono::nanoseconds deadline,
                                     std::chrono::nanoseconds interval) {
    words.insert(words.end(), {fd, deadline.count(), interval.count()});
  });
  return XXH3_64bits(words.data(), words.size() * sizeof words[0]);
}

Fault Session::fault_of(const WaitStatus &status) const {
  if (tracee_.lease().expired())
    return Fault{Fault::Kind::kHang};
  if (status.exited())
    return Fault{Fault::Kind::kExit, status.exit_status()};
  return Fault{Fault::Kind::kSignal, status.term_signal()};
}

Result<void> Session::skip(user_regs_struct regs, long result) {
  regs.orig_rax = static_cast<std::uint64_t>(-1);
  regs.rax = static_cast<std::uint64_t>(result);
  if (auto set = tracee_.set_registers(regs); !set)
    return set;
  if (!awaiting_exit_)
    return {};
  awaiting_exit_ = false;
  return watcher_->returned(tracee_, regs);
}

Result<void> Session::on_syscall_stop() {
  auto exit = tracee_.at_syscall_exit();
  if (!exit)
    return exit.error();
  // An entry stop means the exit of the call awaited was not seen (the
  // target was stopped another way in between): nothing to report.
  const bool returned = awaiting_exit_ && *exit;
  awaiting_exit_ = false;
  if (!returned)
    return {};
  auto regs = tracee_.registers();
  if (!regs)
    return regs.error();
  return watcher_->returned(tracee_, *regs);
}

Result<bool> Session::answer(const user_regs_struct &regs, long result) {
  if (auto skipped = skip(regs, result); !skipped)
    return skipped.error();
  return false;
}

Result<bool> Session::on_seccomp_stop() {
  auto data = tracee_.event_message();
  if (!data)
    return data.error();
  const TrappedSyscall *call = trapped_syscall(*data);
  if (call == nullptr)
    return Error{fmt::format("unexpected seccomp stop (data {})", *data)};
  auto regs = tracee_.registers();
  if (!regs)
    return regs.error();
  // rip is past the instruction: syscall, sysenter and int 0x80 are 2 bytes.
  CMC_LOG_DEBUG("tracer", "pid {}: {} ({}) at {:#x}", tracee_.pid(), call->name,
                static_cast<long>(regs->orig_rax), regs->rip - 2);
  if (watcher_ != nullptr) {
    if (auto seen = watcher_->entered(tracee_, environment_.vdso(), *regs);
        !seen)
      return seen.error();
    awaiting_exit_ = watcher_->wants_results();
  }
  switch (call->trap) {
  case Trap::kForeignArch:
    return Error{"the target made a system call of another ABI (int 0x80 or "
                 "x32), which cmc cannot follow"};
  case Trap::kObserve:
    return false;
  case Trap::kListen:
    listening_fd_ = static_cast<int>(regs->rdi);
    return false;
  case Trap::kEmulate: {
    environment_.note(*call->source, *regs);
    auto result = environment_.emulate(tracee_, *call, *regs);
    if (!result)
      return result.error();
    return answer(*regs, *result);
  }
  case Trap::kTimerfdSet:
  case Trap::kTimerfdGet: {
    environment_.note(*call->source, *regs);
    auto &timers = environment_.timers();
    auto result = call->trap == Trap::kTimerfdSet
                      ? timers.settime(tracee_, environment_.clock(), *regs)
                      : timers.gettime(tracee_, environment_.clock(), *regs);
    if (!result)
      return result.error();
    return answer(*regs, *result);
  }
  case Trap::kRefuse:
    environment_.note(*call->source, *regs);
    return answer(*regs, -ENOSYS);
  case Trap::kTimer:
    return Error{fmt::format("the target arms a timer with {}(); cmc does "
                             "not control timers yet (they would fire in "
                             "real time)",
                             call->name)};
  case Trap::kPassThrough:
    environment_.note(*call->source, *regs);
    return false;
  case Trap::kSleep:
  case Trap::kClockSleep:
    return on_sleep(*call, *regs);
  case Trap::kFutex:
    return on_futex(*call, *regs);
  default:
    return on_wait(*call, *regs);
  }
}

Result<bool> Session::on_sleep(const TrappedSyscall &call,
                               const user_regs_struct &regs) {
  environment_.note(Source::kSleep, regs);
  const bool absolute =
      call.trap == Trap::kClockSleep && (regs.rsi & TIMER_ABSTIME) != 0;
  const std::uint64_t request = call.trap == Trap::kSleep ? regs.rdi : regs.rdx;
  auto length = tracee_.read_value<timespec>(request);
  if (!length)
    return answer(regs, -EFAULT);
  const VirtualClock &clock = environment_.clock();
  std::optional<std::chrono::nanoseconds> deadline =
      clock.elapsed() + from_timespec(*length);
  if (absolute)
    deadline = clock.elapsed_at(static_cast<clockid_t>(regs.rdi), *length);
  return sleep_until(call, regs, deadline, 0);
}

// While the target is single-threaded (cmc refuses threads), a futex wait
// can only end by its timeout.
Result<bool> Session::on_futex(const TrappedSyscall &call,
                               const user_regs_struct &regs) {
  const int op = static_cast<int>(regs.rsi) & FUTEX_CMD_MASK;
  if ((op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET) || regs.r10 == 0)
    return false; // not a wait, or one without timeout: a hang if it blocks
  auto word = tracee_.read_value<std::uint32_t>(regs.rdi);
  if (!word || *word != static_cast<std::uint32_t>(regs.rdx))
    return false; // the kernel answers EFAULT or EAGAIN at once
  auto length = tracee_.read_value<timespec>(regs.r10);
  if (!length)
    return answer(regs, -EFAULT);
  environment_.note(Source::kTimedWait, regs);
  const VirtualClock &clock = environment_.clock();
  // FUTEX_WAIT's timeout is relative; FUTEX_WAIT_BITSET's is an instant of
  // CLOCK_MONOTONIC, or of CLOCK_REALTIME with FUTEX_CLOCK_REALTIME.
  std::optional<std::chrono::nanoseconds> deadline =
      clock.elapsed() + from_timespec(*length);
  if (op == FUTEX_WAIT_BITSET)
    deadline = clock.elapsed_at((regs.rsi & FUTEX_CLOCK_REALTIME) != 0
                                    ? CLOCK_REALTIME
                                    : CLOCK_MONOTONIC,
                                *length);
  return sleep_until(call, regs, deadline, -ETIMEDOUT);
}

Result<bool>
Session::sleep_until(const TrappedSyscall &call, const user_regs_struct &regs,
                     std::optional<std::chrono::nanoseconds> deadline,
                     long result) {
  if (!deadline)
    return answer(regs, -EINVAL);
  if (*deadline <= environment_.clock().elapsed())
    return answer(regs, result);
  waiting_ = Waiting{&call, regs, deadline, result};
  return true;
}

Result<bool> Session::on_wait(const TrappedSyscall &call,
                              const user_regs_struct &regs) {
  if (call.source == Source::kDevRandom) {
    auto answered = environment_.random_read(tracee_, regs);
    if (!answered)
      return answered.error();
    if (*answered)
      return answer(regs, **answered);
  }
  auto wait = would_block(tracee_, call, regs);
  if (!wait)
    return wait.error();
  if (!wait->blocks)
    return false;
  std::optional<std::chrono::nanoseconds> deadline;
  if (wait->timeout) {
    environment_.note(Source::kTimedWait, regs);
    deadline = environment_.clock().elapsed() + *wait->timeout;
  }
  waiting_ = Waiting{&call, regs, deadline, std::nullopt};
  return true;
}

Result<bool> Session::still_waiting() const {
  if (waiting_->result_at_deadline)
    return true;
  auto wait = would_block(tracee_, *waiting_->call, waiting_->regs);
  if (!wait)
    return wait.error();
  return wait->blocks;
}

Result<int> Session::on_signal(int signal) {
  CMC_LOG_DEBUG("tracer", "pid {}: signal {}", tracee_.pid(),
                signal_name(signal));
  if (signal == SIGSEGV) {
    auto emulated = environment_.emulate_tsc(tracee_);
    if (!emulated)
      return emulated.error();
    if (*emulated)
      return 0;
    auto info = tracee_.signal_info();
    const auto address =
        info ? reinterpret_cast<std::uint64_t>(info->si_addr) : 0;
    if (info && environment_.vdso().in_clock_pages(address)) {
      auto regs = tracee_.registers();
      return Error{fmt::format(
          "the target read the kernel's clock page [vvar] at {:#x} (code at "
          "{:#x}): a time read that bypasses the vDSO functions cmc "
          "controls",
          address, regs ? regs->rip : 0)};
    }
  }
  if (signal == SIGTRAP) {
    auto entered = environment_.at_entry(tracee_);
    if (!entered)
      return entered.error();
    if (*entered)
      return 0;
  }
  if (signal == SIGILL) {
    auto regs = tracee_.registers();
    if (!regs)
      return regs.error();
    if (const auto *function = environment_.vdso().function_at(regs->rip))
      return Error{fmt::format("the target called the vDSO function {}, "
                               "which cmc does not control",
                               function->name)};
  }
  return signal;
}

Result<std::optional<sockaddr_storage>> Session::listen_address() const {
  if (!listening_fd_)
    return std::optional<sockaddr_storage>();
  auto socket = tracee_.duplicate_fd(*listening_fd_);
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (!socket ||
      getsockname(socket->get(), reinterpret_cast<sockaddr *>(&address),
                  &length) != 0)
    return Error{"cannot read the address of the target's listening socket"};
  if (address.ss_family == AF_INET) {
    auto &in4 = reinterpret_cast<sockaddr_in &>(address);
    if (in4.sin_addr.s_addr == htonl(INADDR_ANY))
      in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else if (address.ss_family == AF_INET6) {
    auto &in6 = reinterpret_cast<sockaddr_in6 &>(address);
    if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr))
      in6.sin6_addr = in6addr_loopback;
  } else {
    return Error{"the target listens on a socket that is not TCP/IP; cmc "
                 "connects to TCP servers only for now"};
  }
  return std::optional(address);
}

} // namespace cmc::tracer
