#include "tracer/syscalls/child_waits.h"

#include <sys/syscall.h>
#include <sys/wait.h>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "tracer/process/process_access.h"
#include "tracer/time/signal_timers.h"

namespace cmc::tracer {
namespace {

std::optional<std::string> read_text(const std::string &path) {
  std::ifstream file(path);
  if (!file)
    return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// The state letter of /proc/PID/stat ("pid (comm) S ..."; comm may hold
// spaces and parentheses, the last ')' ends it).
char task_state(pid_t pid) {
  const auto stat = read_text(fmt::format("/proc/{}/stat", pid));
  if (!stat)
    return '?';
  const std::size_t close = stat->rfind(')');
  return close == std::string::npos || close + 2 >= stat->size()
             ? '?'
             : (*stat)[close + 2];
}

// What the children of the focused thread's process are now, as far as a
// wait for child (-1: any; a pid in the target's namespace) sees them.
struct Children {
  bool any = false;    // the wait has a child to wait for
  bool zombie = false; // one of them has ended, not yet reaped
};

Children children_of(const ProcessAccess &tracee, pid_t child) {
  Children found;
  std::error_code error;
  // Every thread's children: a wait waits for those of the whole process.
  for (const auto &task : std::filesystem::directory_iterator(
           fmt::format("/proc/{}/task", tracee.process()), error)) {
    const auto list = read_text(task.path().string() + "/children");
    if (!list)
      continue;
    std::istringstream ids(*list);
    pid_t pid = 0;
    while (ids >> pid) {
      // child is the target's pid, /proc's lists cmc's.
      if (child > 0) {
        const auto inside = tracee.namespace_tid(pid);
        if (!inside || *inside != child)
          continue;
      }
      found.any = true;
      found.zombie = found.zombie || task_state(pid) == 'Z';
    }
  }
  return found;
}

// The child a wait names (its pid argument, -1: any).
pid_t named_child(const Registers &regs) {
  if (regs.syscall_number() == SYS_waitid)
    return static_cast<idtype_t>(regs.arg(0)) == P_PID
               ? static_cast<pid_t>(regs.arg(1))
               : -1;
  const auto pid = static_cast<pid_t>(regs.arg(0));
  return pid > 0 ? pid : -1;
}

Result<std::optional<Action>> child_ended(const ProcessAccess &tracee,
                                          const Syscall & /*call*/,
                                          const Registers &regs) {
  const Children children = children_of(tracee, named_child(regs));
  if (!children.any || children.zombie)
    return std::optional(Action::run());
  return std::optional<Action>();
}

Result<Action> wait_for_child(SeccompStop &stop, std::uint64_t options) {
  if ((options & WNOHANG) != 0)
    return Action::run();
  auto over = child_ended(stop.tracee, stop.call, stop.regs);
  if (!over)
    return over.error();
  if (*over)
    return **over;
  return Action::hold(std::nullopt, std::nullopt, child_ended);
}

// The signals pending for the focused thread or its process.
Result<std::uint64_t> pending(const ProcessAccess &tracee) {
  auto status =
      tracee.proc_file(fmt::format("task/{}/status", tracee.focused()).c_str());
  if (!status)
    return status.error();
  const auto own = status_signal_set(*status, "SigPnd");
  const auto shared = status_signal_set(*status, "ShdPnd");
  if (!own || !shared)
    return Error{fmt::format("cannot read the pending signals of thread {} "
                             "in its /proc status",
                             tracee.focused())};
  return *own | *shared;
}

// The signals a sigsuspend or pause blocks while it waits.
Result<std::uint64_t> blocked_in(const ProcessAccess &tracee,
                                 const Registers &regs) {
  if (regs.syscall_number() == SYS_rt_sigsuspend)
    return tracee.read(regs.arg_ptr<std::uint64_t>(0));
  auto status =
      tracee.proc_file(fmt::format("task/{}/status", tracee.focused()).c_str());
  if (!status)
    return status.error();
  const auto blocked = status_signal_set(*status, "SigBlk");
  if (!blocked)
    return Error{"cannot read the blocked signals of a thread in pause()"};
  return *blocked;
}

Result<std::optional<Action>> signal_pending(const ProcessAccess &tracee,
                                             const Syscall & /*call*/,
                                             const Registers &regs) {
  auto blocked = blocked_in(tracee, regs);
  if (!blocked)
    return std::optional(Action::run()); // the kernel answers EFAULT
  auto signals = pending(tracee);
  if (!signals)
    return signals.error();
  // SIGKILL and SIGSTOP cannot be blocked.
  constexpr std::uint64_t kUnblockable =
      (1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1));
  if ((*signals & (~*blocked | kUnblockable)) != 0)
    return std::optional(Action::run());
  return std::optional<Action>();
}

Result<Action> wait_for_signal(SeccompStop &stop) {
  auto over = signal_pending(stop.tracee, stop.call, stop.regs);
  if (!over)
    return over.error();
  if (*over)
    return **over;
  return Action::hold(std::nullopt, std::nullopt, signal_pending);
}

} // namespace

Result<Action> on_wait4(SeccompStop &stop) {
  return wait_for_child(stop, stop.regs.arg(2));
}

Result<Action> on_waitid(SeccompStop &stop) {
  return wait_for_child(stop, stop.regs.arg(3));
}

Result<Action> on_sigsuspend(SeccompStop &stop) {
  return wait_for_signal(stop);
}

Result<Action> on_pause(SeccompStop &stop) { return wait_for_signal(stop); }

Result<Action> on_leave_group(SeccompStop &stop) {
  // The first process leads the group cmc made for it: its setsid fails
  // (EPERM) and its setpgid(0, 0) changes nothing.
  if (stop.tracee.process() == stop.tracee.pid() &&
      (stop.call.number == SYS_setsid || stop.regs.arg(0) == 0))
    return Action::run();
  // Another process leaves the group (a daemon's child, vsftpd's process
  // for a connection): ptrace still follows it and what it starts.
  stop.tracee.leaves_group(stop.tracee.process());
  return Action::run();
}

} // namespace cmc::tracer
