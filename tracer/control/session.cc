#include "tracer/control/session.h"

#include <netinet/in.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "decoder/syscall_scan.h"
#include "tracer/schedule/run_order.h"
#include "tracer/syscalls/input_wait.h"
#include "util/log.h"
#include "util/signal_name.h"

namespace cmc::tracer {
namespace {

// After start-up the regions are addresses in one program: another
// program's memory at those addresses is not the state.
Error exec_error(pid_t pid) {
  std::error_code unreadable;
  const auto program = std::filesystem::read_symlink(
      fmt::format("/proc/{}/exe", pid), unreadable);
  return Error{fmt::format(
      "the target executed another program ({}) during a step; cmc checks "
      "one program and cannot read the state of the new one",
      unreadable ? "unknown" : program.string())};
}

// Whether error, met while cmc had thread tid stopped, shows the target
// gone: a call found it so, or tid is no longer stopped (a call's error
// may not say why it failed).
bool gone(const Error &error, const ProcessAccess &process, pid_t tid) {
  return error.target_gone() || !process.still_stopped(tid);
}

// Whether process pid, which ended, is a zombie its parent has not reaped
// yet (its /proc entry stays until then).
bool zombie(pid_t pid) {
  return access(fmt::format("/proc/{}", pid).c_str(), F_OK) == 0;
}

} // namespace

Result<std::optional<executor::Fault>> Session::run_until_quiescent() {
  ran_before_.reset();
  while (true) {
    auto status = next_stop();
    if (!status)
      return status.error();
    if (!*status)
      break;
    auto fault = on_stop(**status);
    if (!fault && gone(fault.error(), tracee_, tracee_.focused())) {
      ending();
      continue;
    }
    if (fault && *fault && (*fault)->kind == executor::Fault::Kind::kHang &&
        starved_ && !starved_->empty())
      return Error{*starved_};
    if (!fault || *fault)
      return fault;
  }
  // Quiescent. A process reaped since is no longer state. With several
  // processes, what is read of the target now is the first one's.
  std::erase_if(ended_,
                [](const auto &ended) { return !zombie(ended.second); });
  if (processes_.size() > 1)
    tracee_.focus(tracee_.pid());
  // With every thread in a futex wait with no timeout, none is left to
  // wake another.
  for (const auto &[tid, thread] : threads_)
    if (thread.run == Thread::Run::kHeld &&
        (!thread.waiting->futex || thread.waiting->deadline))
      return std::optional<executor::Fault>();
  return std::optional(
      executor::Fault{.kind = executor::Fault::Kind::kDeadlock});
}

Result<std::optional<executor::Fault>> Session::run_until_serving() {
  while (true) {
    auto fault = run_until_quiescent();
    if (!fault || *fault)
      return fault;
    auto serving = waits_for_client();
    if (!serving && serving.error().target_gone()) {
      ending();
      continue; // run_until_quiescent reports how it ended
    }
    if (!serving)
      return serving.error();
    const auto deadline = next_deadline();
    if (*serving || !deadline)
      return fault;
    CMC_LOG_DEBUG("tracer", "start-up: the clock runs to {} ns",
                  deadline->count());
    if (auto advanced =
            advance_clock(*deadline - environment_.clock().elapsed());
        !advanced)
      return advanced.error();
  }
}

Result<bool> Session::waits_for_client() {
  for (const auto &[tid, thread] : threads_) {
    if (thread.run != Thread::Run::kHeld ||
        thread.waiting->call->blocks == nullptr)
      continue; // not held in a wait for input
    if (!listening_fd_)
      return true;
    tracee_.focus(tid);
    auto waits = waits_on(tracee_, *thread.waiting->call, thread.waiting->regs,
                          *listening_fd_);
    if (!waits || *waits)
      return waits;
  }
  return false;
}

std::optional<std::chrono::nanoseconds> Session::next_deadline() const {
  std::optional<std::chrono::nanoseconds> earliest;
  for (const auto &[tid, thread] : threads_)
    if (thread.run == Thread::Run::kHeld && thread.waiting->deadline &&
        (!earliest || *thread.waiting->deadline < *earliest))
      earliest = thread.waiting->deadline;
  return earliest;
}

Result<std::optional<WaitStatus>> Session::next_stop() {
  // While the target ends (ending()) every thread runs.
  const bool running = std::ranges::any_of(threads_, [](const auto &entry) {
    return entry.second.run == Thread::Run::kRunning;
  });
  const bool starting =
      running_ && threads_.at(*running_).run == Thread::Run::kStarting;
  if (!running && !starting) {
    auto dispatched = dispatch();
    if (!dispatched)
      return dispatched.error();
    if (!*dispatched)
      return std::optional<WaitStatus>();
  }
  auto status = tracee_.wait(true);
  if (status && *status)
    ++stops_;
  return status;
}

void Session::begin_step(std::span<const std::uint32_t> preempt_at) {
  preempt_at_.assign(preempt_at.begin(), preempt_at.end());
  next_preemption_ = 0;
  points_ = 0;
  switches_.clear();
  naming_successor_ = false;
}

Result<bool> Session::dispatch() {
  while (true) {
    if (auto released = release_held(); !released)
      return released.error();
    std::map<std::size_t, pid_t> runnable; // by index
    for (const auto &[tid, thread] : threads_) {
      if (thread.run == Thread::Run::kRunning)
        return true; // the target was found ending
      if (can_run(thread))
        runnable[thread.index] = tid;
    }
    std::vector<std::size_t> indices;
    indices.reserve(runnable.size());
    for (const auto &[index, tid] : runnable)
      indices.push_back(index);
    const auto next = next_to_run(indices, ran_before_);
    if (!next)
      return false;
    if (naming_successor_)
      switches_.back() += fmt::format(", thread {} ran", *next);
    naming_successor_ = false;
    const pid_t tid = runnable.at(*next);
    running_ = tid;
    // A thread not yet at its first stop is resumed there.
    Thread &thread = threads_.at(tid);
    if (thread.run != Thread::Run::kReady)
      return true;
    tracee_.focus(tid);
    const Syscall *preempted = std::exchange(thread.preempted_in, nullptr);
    auto then = preempted == nullptr
                    ? Result<Next>(Next::kRun)
                    : handle(thread, *preempted, thread.entered);
    if (!then && gone(then.error(), tracee_, tid)) {
      ending();
      return true; // each thread reports its end
    }
    if (!then)
      return then.error();
    proceed(thread, *then);
    if (*then == Next::kRun)
      return true;
  }
}

Result<void> Session::release_held() {
  for (auto &[tid, thread] : threads_) {
    auto checked = thread.run == Thread::Run::kHeld ? recheck(tid, thread)
                                                    : Result<void>();
    if (!checked && !gone(checked.error(), tracee_, tid))
      return checked.error();
    if (!checked) {
      ending();
      return {}; // each thread reports its end
    }
  }
  return {};
}

Result<long> Session::wake(const FutexWake &wake, bool counts_requeued) {
  const pid_t waker = tracee_.focused();
  const FutexQueue::Woken woken = futexes_.wake(wake);
  for (const pid_t tid : woken.woken) {
    if (auto ended = end_futex_wait(tid); !ended) {
      tracee_.focus(waker);
      return ended.error();
    }
  }
  tracee_.focus(waker);
  return static_cast<long>(woken.woken.size()) +
         (counts_requeued ? woken.requeued : 0);
}

Result<void> Session::wake_changed_words() {
  // Copied: each wake changes the queue.
  const std::vector<FutexQueue::Entry> entries = futexes_.entries();
  for (const FutexQueue::Entry &entry : entries) {
    tracee_.focus(entry.tid);
    auto word = tracee_.read(RemotePtr<std::uint32_t>{entry.wait.address});
    if (word && *word == entry.wait.value)
      continue;
    futexes_.cancel(entry.tid);
    if (auto ended = end_futex_wait(entry.tid); !ended)
      return ended;
  }
  return {};
}

Result<void> Session::end_futex_wait(pid_t tid) {
  Thread &thread = threads_.at(tid);
  const Waiting waited = *thread.waiting;
  thread.waiting.reset();
  thread.run = Thread::Run::kReady;
  tracee_.focus(tid);
  return skip(thread, waited.regs, 0);
}

Result<Session::Thread *> Session::current() {
  const pid_t tid = tracee_.focused();
  if (auto found = threads_.find(tid); found != threads_.end())
    return &found->second;
  return add_task(tid);
}

void Session::proceed(Thread &thread, Next next, int signal) {
  if (next == Next::kRun) {
    thread.run = Thread::Run::kRunning;
    tracee_.resume(signal, thread.awaiting_exit || thread.after != nullptr);
    return;
  }
  thread.run = next == Next::kHold ? Thread::Run::kHeld : Thread::Run::kReady;
  if (running_ == tracee_.focused()) {
    ran_before_ = thread.index;
    running_.reset();
  }
}

Result<std::optional<executor::Fault>>
Session::on_stop(const WaitStatus &status) {
  const pid_t tid = tracee_.focused();
  if (status.gone()) {
    // The first end of a thread the watchdog killed: was it cmc's
    // scheduler that kept the step from ending?
    if (tracee_.hung() && !starved_)
      starved_ = starvation();
    if (tid == tracee_.pid())
      return std::optional(fault_of(status));
    return on_task_end(tid, status);
  }
  auto thread = current();
  if (!thread)
    return thread.error();
  if (auto handled = on_thread_stop(tid, **thread, status); !handled)
    return handled.error();
  return std::optional<executor::Fault>();
}

Result<void> Session::on_thread_stop(pid_t tid, Thread &self,
                                     const WaitStatus &status) {
  if (status.syscall_stop()) {
    if (auto returned = on_syscall_stop(self); !returned)
      return returned.error();
    proceed(self, Next::kRun);
    return {};
  }
  if (status.seccomp_stop()) {
    auto next = on_seccomp_stop(self);
    if (!next)
      return next.error();
    proceed(self, *next);
    return {};
  }
  const int event = status.ptrace_event();
  if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
      event == PTRACE_EVENT_VFORK) {
    if (auto created = on_new_task(); !created)
      return created.error();
    // The parent of a vfork waits in the kernel until its child execs or
    // ends: the child runs first.
    proceed(self, event == PTRACE_EVENT_VFORK ? Next::kYield : Next::kRun);
    return {};
  }
  if (event == PTRACE_EVENT_EXEC)
    return on_exec(tid, self);
  // A new thread starts in a SIGSTOP stop of ptrace's, and runs from there
  // when the scheduler chooses it. A signal-delivery stop passes the signal
  // on unless cmc answers it; other event stops resume with no signal.
  if (self.run == Thread::Run::kStarting && status.stop_signal() == SIGSTOP) {
    proceed(self, running_ == tid ? Next::kRun : Next::kYield);
    return {};
  }
  int signal = 0;
  if (event == 0 && !status.group_stop()) {
    auto deliver = on_signal(status.stop_signal());
    if (!deliver)
      return deliver.error();
    signal = *deliver;
  }
  proceed(self, Next::kRun, signal);
  return {};
}

Result<void> Session::on_exec(pid_t tid, Thread &self) {
  // A process the target started runs another program: cmc would need
  // that program's symbols, vDSO and time sources of its own.
  if (program_fixed_ || self.process != 0)
    return exec_error(tracee_.process());
  // execve killed the other threads of the process; each ends without a
  // stop (the one that called it, now the leader, under its old id
  // without a report).
  std::erase_if(threads_, [&](const auto &entry) {
    if (entry.first == tid || entry.second.process != self.process)
      return false;
    futexes_.cancel(entry.first);
    return true;
  });
  environment_.signal_timers().exec();
  running_ = tid;
  self.waiting.reset();
  self.awaiting_exit = false;
  self.after = nullptr;
  // A new program, with a new vDSO and auxiliary vector.
  if (watcher_ != nullptr)
    watcher_->new_program();
  if (auto controlled = take_control(); !controlled)
    return controlled.error();
  proceed(self, Next::kRun);
  return {};
}

// At the creator's clone, fork or vfork stop. A new thread may have
// stopped (and been registered) already.
Result<std::optional<executor::Fault>> Session::on_new_task() {
  auto pid = tracee_.event_message();
  if (!pid)
    return pid.error();
  const auto tid = static_cast<pid_t>(*pid);
  if (threads_.contains(tid))
    return std::optional<executor::Fault>();
  if (auto added = add_task(tid); !added)
    return added.error();
  return std::optional<executor::Fault>();
}

Result<executor::Fault> Session::await_end() {
  // A dying target's SIGKILL ends every stop: a thread still stopped is
  // not one, and its end would never come.
  for (const auto &[tid, thread] : threads_)
    if ((thread.run == Thread::Run::kHeld ||
         thread.run == Thread::Run::kReady) &&
        tracee_.still_stopped(tid))
      return Error{fmt::format("the target was found gone, but its thread "
                               "{} is still stopped",
                               tid)};
  ending();
  auto fault = run_until_quiescent();
  if (!fault)
    return fault.error();
  if (!*fault || (*fault)->kind == executor::Fault::Kind::kDeadlock)
    return Error{"the target was found gone, but its threads ran on"};
  return **fault;
}

Result<void> Session::advance_clock(std::chrono::nanoseconds by) {
  environment_.clock().advance(by);
  if (auto fired =
          environment_.timers().fire_due(tracee_, environment_.clock());
      !fired) {
    if (!fired.error().target_gone())
      return fired;
    ending(); // run_until_quiescent reports how it ended
    return {};
  }
  for (auto &[tid, thread] : threads_) {
    if (thread.run != Thread::Run::kHeld || !thread.waiting->deadline ||
        *thread.waiting->deadline > environment_.clock().elapsed())
      continue;
    const Waiting fired = *thread.waiting;
    thread.waiting.reset();
    futexes_.cancel(tid);
    thread.run = Thread::Run::kReady;
    thread.after = fired.after;
    tracee_.focus(tid);
    auto ended = fired.result_at_deadline
                     ? skip(thread, fired.regs, *fired.result_at_deadline)
                     : expire(tracee_, *fired.call, fired.regs);
    if (!ended && !gone(ended.error(), tracee_, tid))
      return ended;
    if (!ended) {
      ending();
      return {};
    }
  }
  auto fired = fire_signal_timers();
  if (!fired && !gone(fired.error(), tracee_, tracee_.focused()))
    return fired;
  if (!fired)
    ending();
  return {};
}

std::uint64_t Session::hidden_state() const {
  std::vector<std::int64_t> words{environment_.clock().elapsed().count()};
  // Threads by creation order (their ids differ from run to run), each
  // held in a wait with its deadline, or parked.
  std::map<std::size_t, const Thread *> threads;
  for (const auto &[tid, thread] : threads_)
    threads[thread.index] = &thread;
  for (const auto &[index, thread] : threads) {
    const bool held = thread->run == Thread::Run::kHeld;
    words.insert(words.end(), {static_cast<std::int64_t>(index),
                               static_cast<std::int64_t>(thread->process),
                               static_cast<std::int64_t>(thread->run),
                               held && thread->waiting->deadline
                                   ? thread->waiting->deadline->count()
                                   : -1});
  }
  // The processes that ended and are zombies still.
  for (const auto &[index, pid] : ended_)
    if (zombie(pid))
      words.push_back(-1 - static_cast<std::int64_t>(index));
  // The futex waiters in the order they wake, which the kernel would keep.
  // (The word each waits on is in its registers, which are state.)
  for (const FutexQueue::Entry &entry : futexes_.entries())
    words.push_back(static_cast<std::int64_t>(threads_.at(entry.tid).index));
  environment_.timers().for_each([&](int fd, std::chrono::nanoseconds deadline,
                                     std::chrono::nanoseconds interval) {
    words.insert(words.end(), {fd, deadline.count(), interval.count()});
  });
  environment_.signal_timers().append_state(words);
  return XXH3_64bits(words.data(), words.size() * sizeof words[0]);
}

std::string Session::waits_in() const {
  std::map<std::size_t, std::string_view> calls;
  for (const auto &[tid, thread] : threads_)
    if (thread.run == Thread::Run::kHeld && thread.waiting &&
        thread.waiting->call != nullptr)
      calls[thread.index] = thread.waiting->call->name;
  std::vector<std::string_view> names;
  for (const auto &[index, name] : calls)
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::vector<ThreadRegisters> Session::thread_registers() const {
  std::map<std::size_t, ThreadRegisters> threads;
  for (const auto &[tid, thread] : threads_)
    threads[thread.index] = {tid, thread.entered};
  std::vector<ThreadRegisters> ordered;
  ordered.reserve(threads.size());
  for (const auto &[index, thread] : threads)
    ordered.push_back(thread);
  return ordered;
}

void Session::ending() {
  running_.reset();
  // With one process every thread ends with it; with several, those that
  // a SIGKILL took out of cmc's stops.
  const bool several = processes_.size() > 1;
  for (auto &[tid, thread] : threads_) {
    if (several && thread.run != Thread::Run::kRunning &&
        tracee_.still_stopped(tid))
      continue;
    thread.run = Thread::Run::kRunning;
    thread.waiting.reset();
    thread.awaiting_exit = false;
    thread.after = nullptr;
    thread.preempted_in = nullptr;
  }
}

std::string Session::starvation() const {
  if (!running_ || !threads_.contains(*running_))
    return {};
  const auto waiting = std::ranges::count_if(
      threads_, [](const auto &entry) { return can_run(entry.second); });
  if (waiting == 0)
    return {};
  return fmt::format(
      "the target's thread {} ran for the whole step timeout without a "
      "system call that cmc stops at, while {} other thread(s) that could "
      "run waited for it: cmc runs one thread at a time and switches only "
      "at such calls (there are no performance counters here to preempt it "
      "on), so a thread that spins until another one runs, or blocks in a "
      "call cmc does not hold, cannot be checked",
      threads_.at(*running_).index, waiting);
}

executor::Fault Session::fault_of(const WaitStatus &status) const {
  if (tracee_.hung())
    return executor::Fault{.kind = executor::Fault::Kind::kHang};
  if (status.exited())
    return executor::Fault{.kind = executor::Fault::Kind::kExit,
                           .code = status.exit_status()};
  executor::Fault fault{.kind = executor::Fault::Kind::kSignal,
                        .code = status.term_signal()};
  fault.backtrace = crash_backtrace_;
  return fault;
}

Result<void> Session::skip(Thread &thread, Registers regs, long result) {
  thread.after = nullptr;
  regs.set_syscall_number(-1);
  regs.set_result(result);
  if (auto set = tracee_.set_registers(regs); !set)
    return set;
  if (!thread.awaiting_exit)
    return {};
  thread.awaiting_exit = false;
  return watcher_->returned(tracee_, regs);
}

Result<void> Session::on_syscall_stop(Thread &thread) {
  auto exit = tracee_.at_syscall_exit();
  if (!exit)
    return exit.error();
  // An entry stop means the exit of the call awaited was not seen (the
  // target was stopped another way in between): nothing to report.
  const bool returned = thread.awaiting_exit && *exit;
  const Action::After after = *exit ? thread.after : nullptr;
  thread.awaiting_exit = false;
  thread.after = nullptr;
  if (!returned && after == nullptr)
    return {};
  auto regs = tracee_.registers();
  if (!regs)
    return regs.error();
  if (after != nullptr)
    if (auto done = after(tracee_, thread.entered, regs->result()); !done)
      return done;
  if (!returned)
    return {};
  return watcher_->returned(tracee_, *regs);
}

Result<Session::Next> Session::on_seccomp_stop(Thread &thread) {
  auto data = tracee_.event_message();
  if (!data)
    return data.error();
  const Syscall *call = syscall_at(*data);
  if (call == nullptr)
    return Error{fmt::format("unexpected seccomp stop (data {})", *data)};
  auto regs = tracee_.registers();
  if (!regs)
    return regs.error();
  thread.entered = *regs;
  CMC_LOG_DEBUG("tracer", "tid {}: {} ({}) at {:#x}", tracee_.focused(),
                call->name, regs->syscall_number(), regs->syscall_site());
  if (preempts(thread, *call)) {
    thread.preempted_in = call;
    return Next::kYield;
  }
  return handle(thread, *call, *regs);
}

bool Session::preempts(const Thread &thread, const Syscall &call) {
  if (running_ != tracee_.focused() ||
      std::ranges::none_of(threads_, [&](const auto &entry) {
        return &entry.second != &thread && can_run(entry.second);
      }))
    return false;
  ++points_;
  if (next_preemption_ == preempt_at_.size() ||
      preempt_at_[next_preemption_] != points_)
    return false;
  ++next_preemption_;
  // The row of any other call has no name of its own.
  const std::string name =
      call.number >= 0 ? std::string(call.name)
                       : decoder::syscall_name(thread.entered.syscall_number());
  switches_.push_back(fmt::format("thread {} before {}", thread.index, name));
  naming_successor_ = true;
  return true;
}

Result<Session::Next> Session::handle(Thread &thread, const Syscall &call,
                                      const Registers &regs) {
  if (watcher_ != nullptr) {
    if (auto seen = watcher_->entered(tracee_, environment_.vdso(), regs);
        !seen)
      return seen.error();
    thread.awaiting_exit = watcher_->wants_results();
  }
  if (call.source)
    environment_.note(*call.source, regs);
  SeccompStop stop{tracee_, environment_,  call,
                   regs,    listening_fd_, unrestorable_calls_};
  auto action = call.handler(stop);
  if (!action)
    return action.error();
  auto next = act(thread, call, regs, *action);
  // A timer armed with an absolute time already past fires at once.
  if (next && environment_.signal_timers().due(environment_.clock()))
    if (auto fired = fire_signal_timers(); !fired)
      return fired.error();
  return next;
}

Result<Session::Next> Session::act(Thread &thread, const Syscall &call,
                                   const Registers &regs,
                                   const Action &action) {
  if (action.futex || action.kind == Action::Kind::kWake ||
      action.kind == Action::Kind::kYield)
    ++scheduler_stops_;
  switch (action.kind) {
  case Action::Kind::kRun:
    thread.after = action.after;
    return Next::kRun;
  case Action::Kind::kAnswer:
    if (auto skipped = skip(thread, regs, action.result); !skipped)
      return skipped.error();
    return Next::kRun;
  case Action::Kind::kHold:
    thread.waiting = Waiting{&call,           regs,
                             action.deadline, action.result_at_deadline,
                             action.recheck,  action.futex,
                             action.after};
    if (action.futex)
      futexes_.wait(tracee_.focused(), *action.futex);
    return Next::kHold;
  case Action::Kind::kWake: {
    auto woken = wake(action.wake, action.counts_requeued);
    if (!woken)
      return woken.error();
    if (auto skipped = skip(thread, regs, *woken); !skipped)
      return skipped.error();
    return Next::kRun;
  }
  case Action::Kind::kYield:
    if (auto skipped = skip(thread, regs, 0); !skipped)
      return skipped.error();
    return Next::kYield;
  }
  return Next::kRun;
}

Result<void> Session::recheck(pid_t tid, Thread &thread) {
  const Waiting &waiting = *thread.waiting;
  if (waiting.recheck == nullptr)
    return {};
  tracee_.focus(tid);
  auto over = waiting.recheck(tracee_, *waiting.call, waiting.regs);
  if (!over)
    return over.error();
  if (!*over)
    return {};
  if ((*over)->kind == Action::Kind::kAnswer) {
    tracee_.focus(tid);
    if (auto skipped = skip(thread, waiting.regs, (*over)->result); !skipped)
      return skipped;
  } else {
    thread.after = waiting.after;
  }
  thread.waiting.reset();
  thread.run = Thread::Run::kReady;
  return {};
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

Session::Saved Session::save() const {
  return {environment_,       threads_, threads_created_, processes_,
          processes_created_, ended_,   futexes_,         listening_fd_};
}

void Session::restore(const Saved &saved) {
  environment_ = saved.environment;
  threads_ = saved.threads;
  threads_created_ = saved.threads_created;
  processes_ = saved.processes;
  processes_created_ = saved.processes_created;
  ended_ = saved.ended;
  futexes_ = saved.futexes;
  listening_fd_ = saved.listening_fd;
}

} // namespace cmc::tracer
