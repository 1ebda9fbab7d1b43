// Session and signals: at a signal-delivery stop, the faults cmc answers
// (rdtsc, cpuid, its breakpoints) and the crashes it keeps the stack of;
// and its signal timers (tracer/time/signal_timers.h): the signal of a
// timer that expires on a tick goes to one thread, by a fixed rule, and
// reaches it as the kernel's would.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <map>

#include <fmt/format.h>

#include "tracer/control/session.h"
#include "tracer/syscalls/timed_waits.h"
#include "util/log.h"
#include "util/signal_name.h"

namespace cmc::tracer {
namespace {

std::uint64_t bit_of(int signal) { return std::uint64_t{1} << (signal - 1); }

// What a thread does with a signal, from its /proc status.
struct Disposition {
  bool blocked = false;
  // Dropped by the kernel as it is sent: ignored, or ignored by default
  // and not caught. (cmc must not send it: to a traced thread the kernel
  // would deliver it and end its wait.)
  bool discarded = false;
};

Result<Disposition> disposition(const ProcessAccess &tracee, pid_t tid,
                                int signal) {
  auto status = tracee.proc_file(fmt::format("task/{}/status", tid).c_str());
  if (!status)
    return status.error();
  const auto blocked = status_signal_set(*status, "SigBlk");
  const auto ignored = status_signal_set(*status, "SigIgn");
  const auto caught = status_signal_set(*status, "SigCgt");
  if (!blocked || !ignored || !caught)
    return Error{fmt::format("cannot read the signal sets of thread {} in "
                             "its /proc status",
                             tid)};
  const bool ignored_by_default = signal == SIGCHLD || signal == SIGCONT ||
                                  signal == SIGURG || signal == SIGWINCH;
  return Disposition{
      .blocked = (*blocked & bit_of(signal)) != 0,
      .discarded = (*ignored & bit_of(signal)) != 0 ||
                   (ignored_by_default && (*caught & bit_of(signal)) == 0)};
}

} // namespace

Result<void> Session::fire_signal_timers() {
  const pid_t focused = tracee_.focused();
  for (const TimerSignal &signal :
       environment_.signal_timers().fire_due(environment_.clock())) {
    if (auto sent = send_timer_signal(signal); !sent) {
      tracee_.focus(focused);
      return sent;
    }
  }
  tracee_.focus(focused);
  return {};
}

Result<void> Session::send_timer_signal(const TimerSignal &signal) {
  // A process-directed signal goes to the first thread, in order of
  // creation, that does not block it (the first if all do); a
  // thread-directed one to the thread it names.
  std::map<std::size_t, pid_t> by_index;
  for (const auto &[tid, thread] : threads_)
    by_index[thread.index] = tid;
  std::optional<std::pair<pid_t, Disposition>> chosen;
  for (const auto &[index, tid] : by_index) {
    if (signal.thread) {
      auto inside = tracee_.namespace_tid(tid);
      if (!inside)
        return inside.error();
      if (*inside != *signal.thread)
        continue;
    }
    auto sets = disposition(tracee_, tid, signal.signal);
    if (!sets)
      return sets.error();
    if (!chosen || (chosen->second.blocked && !sets->blocked))
      chosen = {tid, *sets};
    if (!sets->blocked)
      break;
  }
  SignalTimers &timers = environment_.signal_timers();
  if (!chosen || chosen->second.discarded) {
    timers.dropped(signal.key);
    return {};
  }
  const auto [tid, sets] = *chosen;
  if (auto sent = tracee_.send_signal(tid, signal.signal); !sent)
    return sent;
  timers.sent(tid, signal.key, signal.signal);
  Thread &thread = threads_.at(tid);
  if (thread.run != Thread::Run::kHeld || sets.blocked)
    return {}; // delivered when it runs, or unblocks it
  return interrupt(tid, thread);
}

Result<void> Session::interrupt(pid_t tid, Thread &thread) {
  const Waiting waited = *thread.waiting;
  thread.waiting.reset();
  futexes_.cancel(tid);
  thread.run = Thread::Run::kReady;
  // A wait for input, or a futex wait with no timeout, runs: the kernel
  // finds the signal pending and ends the call (EINTR), or restarts it
  // after the handler under SA_RESTART (and cmc sees it again). A sleep
  // and a futex wait with a timeout return EINTR once a handler runs
  // (ERESTART_RESTARTBLOCK); cmc answers them so, as it held them.
  if (!waited.result_at_deadline || (waited.futex && !waited.deadline))
    return {};
  tracee_.focus(tid);
  long result = -EINTR;
  if (!waited.futex)
    result = interrupt_sleep(tracee_, waited.regs,
                             *waited.deadline - environment_.clock().elapsed());
  return skip(thread, waited.regs, result);
}

Result<void> Session::rewrite_timer_signal(int signal) {
  if (!environment_.signal_timers().awaits(tracee_.focused(), signal))
    return {};
  auto info = tracee_.signal_info();
  if (!info)
    return info.error();
  // cmc's tgkill: SI_TKILL from a process the target's PID namespace does
  // not show (or, out of a sandbox, from cmc's own).
  if (info->si_code != SI_TKILL ||
      (info->si_pid != 0 && info->si_pid != getpid()))
    return {};
  auto timer_info =
      environment_.signal_timers().delivered(tracee_.focused(), signal);
  if (!timer_info)
    return {};
  return tracee_.set_signal_info(*timer_info);
}

Result<int> Session::on_signal(int signal) {
  CMC_LOG_DEBUG("tracer", "pid {}: signal {}", tracee_.pid(),
                signal_name(signal));
  if (auto rewritten = rewrite_timer_signal(signal); !rewritten)
    return rewritten.error();
  if (signal == SIGSEGV) {
    auto emulated = environment_.emulate_tsc(tracee_);
    if (!emulated)
      return emulated.error();
    if (*emulated)
      return 0;
    auto cpuid = environment_.emulate_cpuid(tracee_);
    if (!cpuid)
      return cpuid.error();
    if (*cpuid)
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
          address, regs ? regs->ip() : 0)};
    }
  }
  if (signal == SIGTRAP) {
    auto answered = environment_.at_breakpoint(tracee_);
    if (!answered)
      return answered.error();
    if (*answered)
      return 0;
  }
  if (signal == SIGILL) {
    auto regs = tracee_.registers();
    if (!regs)
      return regs.error();
    if (const auto *function = environment_.vdso().function_at(regs->ip()))
      return Error{fmt::format("the target called the vDSO function {}, "
                               "which cmc does not control",
                               function->name)};
  }
  crashed(signal);
  return signal;
}

void Session::crashed(int signal) {
  static constexpr std::array kCrashes{SIGSEGV, SIGBUS,  SIGILL,
                                       SIGFPE,  SIGABRT, SIGSYS};
  if (!crash_backtrace_.empty() ||
      std::ranges::find(kCrashes, signal) == kCrashes.end())
    return;
  // A few frames: where it crashed and the calls that led there.
  if (auto frames = tracee_.backtrace(8))
    crash_backtrace_ = std::move(*frames);
}

} // namespace cmc::tracer
