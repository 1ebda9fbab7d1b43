#pragma once

#include <sys/socket.h>
#include <sys/user.h>

#include <chrono>
#include <optional>
#include <string>

#include "tracer/environment.h"
#include "tracer/executor.h"
#include "tracer/syscall_watcher.h"
#include "tracer/tracee.h"
#include "util/result.h"

namespace cmc::tracer {

// Drives one traced target from one quiescent point to the next, answers
// its reads of time and randomness from the Environment, and learns the
// address it listens on from its own listen().
class Session {
public:
  Session(Tracee &tracee, std::uint64_t seed)
      : tracee_(tracee), environment_(seed) {}

  // At the exec stop, before the target's first instruction.
  [[nodiscard]] Result<void> take_control() {
    return environment_.take_control(tracee_);
  }

  // Runs the target until every thread waits for input that cmc has not
  // sent or for the virtual clock (it is then stopped on entry to that
  // call), or until it ends. A target still waiting as it was is not
  // resumed at all. Returns nothing when quiescent, the Fault when it died,
  // exited or hung (step field unset), an Error when it cannot be followed
  // or it reached for something cmc does not control.
  [[nodiscard]] Result<std::optional<Fault>> run_until_quiescent();

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

private:
  // The call a quiescent target is stopped in.
  struct Waiting {
    const TrappedSyscall *call = nullptr;
    user_regs_struct regs{};
    // Elapsed virtual time at which it times out; nothing: never.
    std::optional<std::chrono::nanoseconds> deadline;
    // A sleep or futex wait, which nothing but its deadline ends: skipped
    // with this result then. Nothing: a wait for input, made to time out
    // (expire()) and checked again on every resume.
    std::optional<long> result_at_deadline;
  };

  // True when the stop is quiescent.
  [[nodiscard]] Result<bool> on_seccomp_stop();
  [[nodiscard]] Result<bool> on_sleep(const TrappedSyscall &call,
                                      const user_regs_struct &regs);
  [[nodiscard]] Result<bool> on_futex(const TrappedSyscall &call,
                                      const user_regs_struct &regs);
  // Quiescent until deadline (nothing: the call's time is invalid), then
  // skipped with result.
  [[nodiscard]] Result<bool>
  sleep_until(const TrappedSyscall &call, const user_regs_struct &regs,
              std::optional<std::chrono::nanoseconds> deadline, long result);
  [[nodiscard]] Result<bool> on_wait(const TrappedSyscall &call,
                                     const user_regs_struct &regs);
  // At a signal-delivery stop: the signal to deliver (0 when cmc handled
  // it), or an Error when it shows an escape from cmc's control.
  [[nodiscard]] Result<int> on_signal(int signal);
  [[nodiscard]] Result<bool> still_waiting() const;
  // At a syscall stop: reports the result of the call awaited.
  [[nodiscard]] Result<void> on_syscall_stop();
  // Skips the system call at this stop; it returns result instead.
  [[nodiscard]] Result<void> skip(user_regs_struct regs, long result);
  // skip(), at a stop that is not quiescent: returns false.
  [[nodiscard]] Result<bool> answer(const user_regs_struct &regs, long result);
  [[nodiscard]] Fault fault_of(const WaitStatus &status) const;

  Tracee &tracee_;
  Environment environment_;
  std::optional<int> listening_fd_;
  std::optional<Waiting> waiting_;
  SyscallWatcher *watcher_ = nullptr;
  // The watcher wants the result of the call entered last, which runs:
  // resume to its syscall-exit stop.
  bool awaiting_exit_ = false;
};

} // namespace cmc::tracer
