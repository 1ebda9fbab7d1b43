#pragma once

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <string>

namespace cmc::tracer {

// A status from waitpid, with names for the ptrace stops it can encode.
class WaitStatus {
public:
  explicit WaitStatus(int raw) : raw_(raw) {}

  [[nodiscard]] bool exited() const { return WIFEXITED(raw_); }
  [[nodiscard]] int exit_status() const { return WEXITSTATUS(raw_); }
  [[nodiscard]] bool killed() const { return WIFSIGNALED(raw_); }
  [[nodiscard]] int term_signal() const { return WTERMSIG(raw_); }
  [[nodiscard]] bool gone() const { return exited() || killed(); }
  [[nodiscard]] bool stopped() const { return WIFSTOPPED(raw_); }
  [[nodiscard]] int stop_signal() const { return WSTOPSIG(raw_); }
  // PTRACE_EVENT_* of a ptrace event stop, 0 otherwise.
  [[nodiscard]] int ptrace_event() const {
    return stopped() && stop_signal() == SIGTRAP ? (raw_ >> 16) & 0xff : 0;
  }
  [[nodiscard]] bool seccomp_stop() const {
    return ptrace_event() == PTRACE_EVENT_SECCOMP;
  }
  // A syscall-entry or -exit stop of PTRACE_SYSCALL (PTRACE_O_TRACESYSGOOD).
  [[nodiscard]] bool syscall_stop() const {
    return stopped() && stop_signal() == (SIGTRAP | 0x80);
  }
  // A stop with PTRACE_EVENT_STOP: group-stop under PTRACE_SEIZE.
  [[nodiscard]] bool group_stop() const {
    return stopped() && (raw_ >> 16) == PTRACE_EVENT_STOP;
  }

private:
  int raw_;
};

} // namespace cmc::tracer
