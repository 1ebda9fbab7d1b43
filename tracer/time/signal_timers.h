#pragma once

#include <sys/time.h>
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "tracer/process/process_access.h"
#include "tracer/time/virtual_clock.h"
#include "util/result.h"

namespace cmc::tracer {

// A signal a timer sends when it expires.
struct TimerSignal {
  int key = 0; // the timer's (SignalTimers::kRealTimer, ... or its id)
  int signal = 0;
  // SIGEV_THREAD_ID: the thread it goes to, an id of the target's PID
  // namespace; nothing: the process.
  std::optional<pid_t> thread;
};

// The target's signal timers, run on the virtual clock: alarm and the
// interval timers of setitimer (ITIMER_REAL, and ITIMER_VIRTUAL and
// ITIMER_PROF on its CPU time, which is the elapsed virtual time as
// VirtualClock's CPU-time clocks read it), and the POSIX timers of
// timer_create. cmc answers these calls itself (the kernel's timer is
// never armed); fire_due() says which signals a tick sends, and
// delivered() what the target's siginfo shows of each.
class SignalTimers {
public:
  // The keys of the interval timers; POSIX timers have ids from 0, in
  // order of creation, as the kernel numbers them for a new process.
  static constexpr int kRealTimer = -1 - ITIMER_REAL;
  static constexpr int kVirtualTimer = -1 - ITIMER_VIRTUAL;
  static constexpr int kProfTimer = -1 - ITIMER_PROF;

  // Each returns the call's result (-errno on failure), given the
  // arguments at regs.
  [[nodiscard]] long alarm(const VirtualClock &clock, const Registers &regs);
  [[nodiscard]] long setitimer(ProcessAccess &tracee, const VirtualClock &clock,
                               const Registers &regs);
  [[nodiscard]] long getitimer(ProcessAccess &tracee, const VirtualClock &clock,
                               const Registers &regs) const;
  [[nodiscard]] long create(ProcessAccess &tracee, const Registers &regs);
  [[nodiscard]] long settime(ProcessAccess &tracee, const VirtualClock &clock,
                             const Registers &regs);
  [[nodiscard]] long gettime(ProcessAccess &tracee, const VirtualClock &clock,
                             const Registers &regs) const;
  [[nodiscard]] long getoverrun(const Registers &regs) const;
  [[nodiscard]] long remove(const Registers &regs);

  // Whether a timer's deadline is at or before the clock.
  [[nodiscard]] bool due(const VirtualClock &clock) const;
  // Expires every timer the clock has reached, in order of deadline: a
  // one-shot one is disarmed, a periodic one rearmed past the clock. Each
  // returns the signal to send, unless it notifies nobody (SIGEV_NONE) or
  // its last signal is still pending: then, as in the kernel, the missed
  // expirations count as overruns of the pending one.
  [[nodiscard]] std::vector<TimerSignal> fire_due(const VirtualClock &clock);
  // cmc sent the signal of timer key to thread tid (cmc's id).
  void sent(pid_t tid, int key, int signal);
  // The signal of timer key was not sent: the kernel would have dropped it
  // (ignored).
  void dropped(int key);
  // Whether cmc sent signal to thread tid for a timer, not yet delivered.
  [[nodiscard]] bool awaits(pid_t tid, int signal) const;
  // Thread tid is at the delivery of signal: if cmc sent it for a timer,
  // the siginfo the kernel would deliver (SI_TIMER with the timer's id,
  // overrun and value; SI_KERNEL for an interval timer's).
  [[nodiscard]] std::optional<siginfo_t> delivered(pid_t tid, int signal);
  // At an exec: POSIX timers are deleted, interval timers kept.
  void exec();

  // Everything that decides what the timers do next, for the fingerprint.
  void append_state(std::vector<std::int64_t> &words) const;

private:
  struct Timer {
    clockid_t clock = CLOCK_REALTIME;
    int notify = SIGEV_SIGNAL;
    int signal = SIGALRM;
    pid_t thread = 0; // SIGEV_THREAD_ID
    sigval value{};
    std::optional<std::chrono::nanoseconds> deadline; // elapsed; nothing:
                                                      // disarmed
    std::chrono::nanoseconds interval{0};             // zero: one-shot
    bool pending = false; // its signal sent, not yet delivered
    int overrun = 0;      // of the pending signal
    int last_overrun = 0; // of the signal delivered last
  };
  struct Sent {
    pid_t tid;
    int key;
    int signal;
  };
  [[nodiscard]] static itimerspec remaining(const Timer &timer,
                                            const VirtualClock &clock);
  [[nodiscard]] long set(int key, const VirtualClock &clock,
                         const itimerspec &value, bool absolute);
  [[nodiscard]] const Timer *posix_timer(const Registers &regs) const;

  std::map<int, Timer> timers_;
  int next_id_ = 0;
  std::vector<Sent> sent_;
};

// The signal set of a /proc/PID/task/TID/status line (field "SigBlk",
// "SigIgn", "SigCgt"): bit N-1 for signal N; nothing if it is missing.
[[nodiscard]] std::optional<std::uint64_t>
status_signal_set(std::string_view status, std::string_view field);

} // namespace cmc::tracer
