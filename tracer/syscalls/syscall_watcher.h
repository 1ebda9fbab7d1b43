#pragma once

#include "tracer/process/process_access.h"
#include "tracer/time/vdso_control.h"
#include "util/result.h"

namespace cmc::tracer {

// Follows the system calls of one run (Session::watch). Which calls it
// sees depends on the filter: LaunchSpec::observe stops on all of them.
class SyscallWatcher {
public:
  SyscallWatcher() = default;
  SyscallWatcher(const SyscallWatcher &) = delete;
  SyscallWatcher &operator=(const SyscallWatcher &) = delete;
  SyscallWatcher(SyscallWatcher &&) = delete;
  SyscallWatcher &operator=(SyscallWatcher &&) = delete;
  virtual ~SyscallWatcher() = default;

  // At the seccomp stop of a call, before cmc handles it; the target is
  // stopped there (rip is past the instruction).
  [[nodiscard]] virtual Result<void> entered(const ProcessAccess &tracee,
                                             const VdsoLayout &vdso,
                                             const Registers &regs) = 0;
  // When the call entered last has returned, its result in regs.result():
  // at its syscall-exit stop, or at once when cmc answered it. Only for a
  // watcher that wants_results: a call that runs then costs a second stop.
  [[nodiscard]] virtual Result<void> returned(const ProcessAccess & /*tracee*/,
                                              const Registers & /*regs*/) {
    return {};
  }
  [[nodiscard]] virtual bool wants_results() const { return false; }
  // The thread that entered the call last ended in it (exit, or killed):
  // the call never returns.
  virtual void ended_in_call(const ProcessAccess & /*tracee*/) {}
  // After an exec: the same address may be other code now.
  virtual void new_program() {}
};

} // namespace cmc::tracer
