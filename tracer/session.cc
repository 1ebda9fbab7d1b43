#include "tracer/session.h"

#include <netinet/in.h>

#include <fmt/format.h>

#include "tracer/input_wait.h"
#include "tracer/syscall_table.h"
#include "tracer/watchdog.h"

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
  int signal = 0;
  while (true) {
    auto status = tracee_.resume_and_wait(signal);
    signal = 0;
    if (!status)
      return status.error();
    if (status->gone())
      return std::optional(fault_of(*status));
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
    // A signal-delivery stop: pass the signal on. Other event stops (exec)
    // resume with no signal.
    if (event == 0 && !status->group_stop())
      signal = status->stop_signal();
  }
}

Fault Session::fault_of(const WaitStatus &status) const {
  if (tracee_.lease().expired())
    return Fault{Fault::Kind::kHang};
  if (status.exited())
    return Fault{Fault::Kind::kExit, status.exit_status()};
  return Fault{Fault::Kind::kSignal, status.term_signal()};
}

Result<bool> Session::on_seccomp_stop() {
  auto data = tracee_.event_message();
  if (!data)
    return data.error();
  const TrappedSyscall *call = trapped_syscall(*data);
  if (call == nullptr)
    return Error{fmt::format("unexpected seccomp stop (data {})", *data)};
  if (call->trap == Trap::kForeignArch)
    return Error{"the target made a system call of another ABI (int 0x80 or "
                 "x32), which cmc cannot follow"};
  auto regs = tracee_.registers();
  if (!regs)
    return regs.error();
  if (call->trap == Trap::kListen) {
    listening_fd_ = static_cast<int>(regs->rdi);
    return false;
  }
  return would_block(tracee_, *call, *regs);
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
