#include "bench/stop_call.h"

#include <fmt/format.h>

#include "tracer/process/ptrace_unsafe.h"

namespace cmc::bench {

namespace sys = tracer::sys;

user_regs_struct reentering(const user_regs_struct &at_call) {
  user_regs_struct regs = at_call;
  regs.rip -= 2;
  regs.rax = regs.orig_rax;
  return regs;
}

Result<void> run_to_seccomp_stop(pid_t pid) {
  sys::resume(pid, 0, false);
  auto status = sys::wait_for(pid);
  if (!status)
    return status.error();
  if (!status->seccomp_stop())
    return Error{fmt::format("pid {} did not stop at its next wait", pid)};
  return {};
}

namespace {

// Resumes pid to its syscall-exit stop; a fork's child on the way.
Result<StopCall> run_call(pid_t pid) {
  StopCall call;
  sys::resume(pid, 0, true);
  auto status = sys::wait_for(pid);
  if (status && status->ptrace_event() == PTRACE_EVENT_FORK) {
    auto child = sys::event_message(pid);
    if (!child)
      return child.error();
    call.child = static_cast<pid_t>(*child);
    auto first = sys::wait_for(*call.child);
    if (!first || !first->stopped())
      return Error{"the forked child did not stop"};
    sys::resume(pid, 0, true);
    status = sys::wait_for(pid);
  }
  if (!status)
    return status.error();
  if (!status->syscall_stop())
    return Error{fmt::format("pid {} did not stop at a call's exit", pid)};
  auto regs = sys::registers(pid);
  if (!regs)
    return regs.error();
  call.result = static_cast<long>(regs->rax);
  return call;
}

} // namespace

Result<StopCall> call_at_stop(pid_t pid, const user_regs_struct &at_call,
                              long nr,
                              const std::array<std::uint64_t, 6> &args) {
  user_regs_struct regs = at_call;
  regs.orig_rax = static_cast<std::uint64_t>(nr);
  regs.rdi = args[0];
  regs.rsi = args[1];
  regs.rdx = args[2];
  regs.r10 = args[3];
  regs.r8 = args[4];
  regs.r9 = args[5];
  if (auto set = sys::set_registers(pid, regs); !set)
    return set.error();
  auto call = run_call(pid);
  if (!call)
    return call;
  if (auto set = sys::set_registers(pid, reentering(at_call)); !set)
    return set.error();
  if (auto again = run_to_seccomp_stop(pid); !again)
    return again.error();
  if (auto set = sys::set_registers(pid, at_call); !set)
    return set.error();
  return call;
}

} // namespace cmc::bench
