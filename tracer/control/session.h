#pragma once

#include <sys/socket.h>

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "tracer/process/process_access.h"
#include "tracer/schedule/futex_queue.h"
#include "tracer/syscalls/environment.h"
#include "tracer/syscalls/syscall_table.h"
#include "tracer/syscalls/syscall_watcher.h"
#include "util/result.h"

namespace cmc::tracer {

// Drives one traced target from one quiescent point to the next, answers
// its reads of time and randomness from the Environment, and learns the
// address it listens on from its own listen().
//
// Its threads run one at a time, on cmc's futexes
// (tracer/schedule/futex_queue.h), so that every run of a path runs them
// in the same order: the one running goes on until it waits (a call held,
// a futex wait), yields or ends; then the next that can run, in order of
// creation after it (tracer/schedule/run_order.h), the lowest first at the
// start of a step. A step may also switch away from the thread that runs
// at its preemption points (executor::PathStep): at the entry of a system
// call it stopped at while another thread could run, before cmc handles
// the call, which is handled when the thread runs again.
class Session {
public:
  Session(ProcessAccess &tracee, std::uint64_t seed)
      : tracee_(tracee),
        environment_(seed), threads_{{tracee.pid(),
                                      Thread{0, 0, Thread::Run::kReady,
                                             std::nullopt, false}}},
        processes_{{tracee.pid(), 0}} {}

  // At the exec stop, before the target's first instruction.
  [[nodiscard]] Result<void> take_control() {
    return environment_.take_control(tracee_);
  }

  // From now on an exec of another program ends the run with an Error (at
  // start-up, as when a wrapper execs the server, cmc follows it).
  void fix_program() { program_fixed_ = true; }

  // Runs the target until it is quiescent: every thread waits, stopped on
  // entry to the call it waits in, for input that cmc has not sent, for the
  // virtual clock, or in a futex wait that only another thread can end; or
  // until it ends. A thread still waiting as it was is not resumed at all.
  // Returns nothing when quiescent, the Fault when it died, exited, hung or
  // deadlocked (every thread in a futex wait with no timeout; step field
  // unset), an Error when it cannot be followed or it reached for
  // something cmc does not control.
  [[nodiscard]] Result<std::optional<executor::Fault>> run_until_quiescent();

  // run_until_quiescent() for start-up: sleeps and timed waits before the
  // target first waits for a client (a thread held in a wait that the
  // listening socket would end) run to their deadlines on the virtual
  // clock, the earliest first. They are not part of the explored space.
  [[nodiscard]] Result<std::optional<executor::Fault>> run_until_serving();

  // After a read found the target gone (an Error of kind kTargetGone)
  // while cmc had it stopped: waits for the end of each of its threads and
  // returns how it ended; an Error if it was not ending after all.
  [[nodiscard]] Result<executor::Fault> await_end();

  // The next step switches away from the thread that runs at these of its
  // preemption points (ascending, from 1); counted from here on.
  void begin_step(std::span<const std::uint32_t> preempt_at);
  // The preemption points the step passed so far, and its switches
  // ("thread 2 before write, thread 3 ran").
  [[nodiscard]] std::uint32_t preemption_points() const { return points_; }
  [[nodiscard]] const std::vector<std::string> &preempted() const {
    return switches_;
  }

  // Moves the virtual clock on. A wait or sleep whose deadline it passes
  // times out when run_until_quiescent next resumes the target.
  [[nodiscard]] Result<void> advance_clock(std::chrono::nanoseconds by);

  // The TCP address the target listens on, as a client reaches it
  // (a wildcard address becomes loopback). Nothing before listen().
  [[nodiscard]] Result<std::optional<sockaddr_storage>> listen_address() const;

  // Shows watcher every system call the filter stops from now on.
  void watch(SyscallWatcher &watcher) { watcher_ = &watcher; }

  [[nodiscard]] const Environment &environment() const { return environment_; }
  // What decides the target's future beyond its memory: the virtual clock,
  // the deadline of the call it waits in, its timers. Hashed, for the
  // fingerprint: two runs that agree on the regions but not on this are
  // different states.
  [[nodiscard]] std::uint64_t hidden_state() const;
  // The calls the threads of a quiescent target wait in, each named once,
  // in order of the threads' creation: "epoll_wait", "accept, futex".
  [[nodiscard]] std::string waits_in() const;
  // The threads of a quiescent target in order of creation, each with its
  // registers as it entered the call it waits in.
  [[nodiscard]] std::vector<ThreadRegisters> thread_registers() const;
  [[nodiscard]] std::size_t thread_count() const { return threads_.size(); }
  // The processes of a quiescent target in order of creation, each with
  // its threads (as thread_registers()): the first process first.
  [[nodiscard]] std::vector<std::vector<ThreadRegisters>>
  process_registers() const;
  [[nodiscard]] std::size_t process_count() const { return processes_.size(); }
  // The ptrace stops of the target so far, and those of them at which the
  // scheduler queued a futex wait, woke one or yielded (the calls it
  // stops for threads alone).
  [[nodiscard]] std::size_t stops() const { return stops_; }
  [[nodiscard]] std::size_t scheduler_stops() const { return scheduler_stops_; }
  // How many calls the target made whose effect a snapshot cannot undo
  // (SeccompStop::unrestorable_calls).
  [[nodiscard]] std::size_t unrestorable_calls() const {
    return unrestorable_calls_;
  }
  // Whether the target listens on a socket cmc saw it listen on.
  [[nodiscard]] bool listens() const { return listening_fd_.has_value(); }
  // Its descriptor, if it does.
  [[nodiscard]] std::optional<int> listening_fd() const {
    return listening_fd_;
  }

  // What a step changes of the session, as values: a snapshot of a
  // quiescent target (tracer/snapshot/snapshot.h) puts it back with the
  // target's memory and registers.
  struct Saved;
  [[nodiscard]] Saved save() const;
  void restore(const Saved &saved);

private:
  // The call a quiescent thread is stopped in.
  struct Waiting {
    const Syscall *call = nullptr;
    Registers regs{};
    // Elapsed virtual time at which it times out; nothing: never.
    std::optional<std::chrono::nanoseconds> deadline;
    // A sleep or futex wait: skipped with this result at its deadline.
    // Nothing: a wait for input, made to time out (expire()).
    std::optional<long> result_at_deadline;
    // Checked again whenever no thread runs; nullptr: only its deadline
    // (or, for a futex wait, a wake) ends it.
    Action::Recheck recheck = nullptr;
    std::optional<FutexWait> futex; // queued in futexes_
    Action::After after = nullptr;  // when it runs
  };

  // One thread of the target and where cmc has it.
  struct Thread {
    enum class Run {
      kStarting, // created, its first stop (SIGSTOP) not yet seen
      kRunning,  // resumed; it stops again or ends
      kHeld,     // stopped by cmc in a wait (waiting)
      kReady,    // stopped by cmc, free to run: resumed when it is chosen
    };
    std::size_t index = 0;   // in order of creation; the leader is 0
    std::size_t process = 0; // its process's, in order of creation
    Run run = Run::kStarting;
    std::optional<Waiting> waiting;
    // The watcher wants the result of the call entered last, which runs:
    // resumed to its syscall-exit stop.
    bool awaiting_exit = false;
    // What cmc does at the exit of the call entered last, which runs
    // (Action::after): resumed to its syscall-exit stop too.
    Action::After after = nullptr;
    // Its registers at its last seccomp stop.
    Registers entered{};
    // Switched away from at the entry of this call (kReady), which is
    // handled when it runs again; nullptr when not.
    const Syscall *preempted_in = nullptr;
  };

  // Whether the scheduler may run the thread next: stopped by cmc and free
  // to run, or new and not yet at its first stop.
  [[nodiscard]] static bool can_run(const Thread &thread) {
    return thread.run == Thread::Run::kReady ||
           thread.run == Thread::Run::kStarting;
  }

  // What to do with a thread at a stop: resume it, hold it in its wait, or
  // leave it stopped for another thread to run first (kReady).
  enum class Next { kRun, kHold, kYield };

  // The next stop of any thread (focused then), or nothing when the
  // target is quiescent: no thread runs, and none can.
  [[nodiscard]] Result<std::optional<WaitStatus>> next_stop();
  // When no thread runs: resumes the next that can (held threads whose
  // wait is over first made so); false when none can.
  [[nodiscard]] Result<bool> dispatch();
  // Whether a held thread waits for input the listening socket would end
  // (any input wait when the target listens on no socket cmc saw).
  [[nodiscard]] Result<bool> waits_for_client();
  // The earliest deadline of a held thread's wait or sleep.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> next_deadline() const;
  // Handles a stop of the focused thread; a Fault when the target ended.
  [[nodiscard]] Result<std::optional<executor::Fault>>
  on_stop(const WaitStatus &status);
  // The same for a stop of thread tid (self) that is not its end.
  [[nodiscard]] Result<void> on_thread_stop(pid_t tid, Thread &self,
                                            const WaitStatus &status);
  // At the stop of thread tid (self) after a successful execve.
  [[nodiscard]] Result<void> on_exec(pid_t tid, Thread &self);
  [[nodiscard]] Result<std::optional<executor::Fault>> on_new_task();
  // The focused thread, registered when it is new (a clone, fork or vfork
  // whose event has not been seen yet).
  [[nodiscard]] Result<Thread *> current();
  // Registers task tid, new: a thread of a process of the target's, or a
  // process it started.
  [[nodiscard]] Result<Thread *> add_task(pid_t tid);
  // At the end of task tid (status), not the first process's leader: a
  // Fault when a process of the target died of a signal.
  [[nodiscard]] Result<std::optional<executor::Fault>>
  on_task_end(pid_t tid, const WaitStatus &status);
  // Makes every held thread whose wait is over ready (recheck()); an
  // Error, or the target found ending.
  [[nodiscard]] Result<void> release_held();
  // Resumes the focused thread as next says.
  void proceed(Thread &thread, Next next, int signal = 0);
  // Wakes the waiters of cmc's futexes that wake names: each returns 0
  // from its wait, ready to run. Returns how many it woke (and requeued).
  [[nodiscard]] Result<long> wake(const FutexWake &wake, bool counts_requeued);
  // After a thread's end: the kernel cleared its clear_child_tid word and
  // woke that futex (pthread_join waits on it), and robust mutexes it held;
  // neither reaches cmc's futexes, so each waiter whose word changed wakes.
  [[nodiscard]] Result<void> wake_changed_words();
  // Ends the futex wait of thread tid, out of the queue: it returns 0,
  // ready to run (focused).
  [[nodiscard]] Result<void> end_futex_wait(pid_t tid);
  // Checks the wait of a held thread again: kReady when it is over.
  [[nodiscard]] Result<void> recheck(pid_t tid, Thread &thread);
  // Looks up the row of the call the thread stopped at and runs its
  // handler, unless the step preempts the thread there.
  [[nodiscard]] Result<Next> on_seccomp_stop(Thread &thread);
  // At the entry of call, where the thread runs: a preemption point when
  // another thread could run; true when the step switches away there.
  [[nodiscard]] bool preempts(const Thread &thread, const Syscall &call);
  // Handles the call the focused thread entered with regs.
  [[nodiscard]] Result<Next> handle(Thread &thread, const Syscall &call,
                                    const Registers &regs);
  // Does what a handler decided for the thread stopped at call.
  [[nodiscard]] Result<Next> act(Thread &thread, const Syscall &call,
                                 const Registers &regs, const Action &action);
  // Sends the signals of the timers whose deadline the clock has reached
  // (tracer/control/session_signals.cc); the focused thread stays so.
  [[nodiscard]] Result<void> fire_signal_timers();
  // Sends a timer's signal to the thread the kernel could give it to, and
  // ends that thread's held wait as the signal would.
  [[nodiscard]] Result<void> send_timer_signal(const TimerSignal &signal);
  // Thread tid, held, has a signal to take: its wait ends as in the
  // kernel, which sees the signal pending.
  [[nodiscard]] Result<void> interrupt(pid_t tid, Thread &thread);
  // At the delivery of a signal cmc sent for a timer: gives the target
  // the siginfo the kernel would.
  [[nodiscard]] Result<void> rewrite_timer_signal(int signal);
  // At a signal-delivery stop: the signal to deliver (0 when cmc handled
  // it), or an Error when it shows an escape from cmc's control.
  [[nodiscard]] Result<int> on_signal(int signal);
  // At the delivery of a signal that kills unless handled: keeps the
  // stack of the thread it hit, for the Fault.
  void crashed(int signal);
  // At a syscall stop: reports the result of the call awaited.
  [[nodiscard]] Result<void> on_syscall_stop(Thread &thread);
  // Skips the system call the focused thread is stopped at; it returns
  // result instead.
  [[nodiscard]] Result<void> skip(Thread &thread, Registers regs, long result);
  // The target is ending: only a SIGKILL ends a stop of cmc's, sent to
  // every thread as the process dies (or by another thread's execve).
  // Every thread's end is awaited from waitpid, the leader's last, which
  // tells how it ended (fault_of).
  void ending();
  [[nodiscard]] executor::Fault fault_of(const WaitStatus &status) const;
  // For a target the watchdog killed: why cmc's scheduler, not the target,
  // may have kept the step from ending (a thread ran on without a system
  // call while others that could run waited); empty when not.
  [[nodiscard]] std::string starvation() const;

  ProcessAccess &tracee_;
  Environment environment_;
  // The stack where the first crash signal hit (see crashed()).
  std::vector<executor::Frame> crash_backtrace_;
  std::optional<int> listening_fd_;
  std::size_t unrestorable_calls_ = 0; // SeccompStop::unrestorable_calls
  bool program_fixed_ = false;
  std::map<pid_t, Thread> threads_; // by thread id
  std::size_t threads_created_ = 1;
  // The target's living processes by id (thread group), each with its
  // index in order of creation.
  std::map<pid_t, std::size_t> processes_;
  std::size_t processes_created_ = 1;
  // The processes that ended (by index, with their id) and may be zombies
  // their parent has not reaped: state until it has (hidden_state()).
  std::vector<std::pair<std::size_t, pid_t>> ended_;
  std::size_t stops_ = 0;
  std::size_t scheduler_stops_ = 0;
  FutexQueue futexes_;
  // The thread cmc resumed to run (it may not have made its first stop
  // yet), and the index of the one that ran before it in this step.
  std::optional<pid_t> running_;
  std::optional<std::size_t> ran_before_;
  // starvation() as the watchdog's kill was first seen.
  std::optional<std::string> starved_;
  // The step's preemptions (begin_step): the points to switch at, the
  // next of them, the points passed, the switches made, and whether the
  // last switch waits for the thread that runs after it to be named.
  std::vector<std::uint32_t> preempt_at_;
  std::size_t next_preemption_ = 0;
  std::uint32_t points_ = 0;
  std::vector<std::string> switches_;
  bool naming_successor_ = false;
  SyscallWatcher *watcher_ = nullptr;
};

struct Session::Saved {
  Environment environment{0};
  std::map<pid_t, Thread> threads;
  std::size_t threads_created = 0;
  std::map<pid_t, std::size_t> processes;
  std::size_t processes_created = 0;
  std::vector<std::pair<std::size_t, pid_t>> ended;
  FutexQueue futexes;
  std::optional<int> listening_fd;
};

} // namespace cmc::tracer
