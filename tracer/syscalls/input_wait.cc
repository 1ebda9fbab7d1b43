#include "tracer/syscalls/input_wait.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <vector>

#include <fmt/format.h>

#include "tracer/net/netlink_times.h"
#include "tracer/syscalls/environment.h"
#include "tracer/syscalls/proc_times.h"
#include "tracer/time/virtual_clock.h"

namespace cmc::tracer {
namespace {

// Polls duplicates of the target's descriptors without waiting. A
// descriptor the target does not have makes its call fail at once: ready.
bool any_ready(const ProcessAccess &tracee, std::span<const pollfd> wanted) {
  std::vector<UniqueFd> copies;
  std::vector<pollfd> local;
  for (const pollfd &entry : wanted) {
    if (entry.fd < 0)
      continue;
    auto copy = tracee.duplicate_fd(entry.fd);
    if (!copy)
      return true;
    local.push_back({copy->get(), entry.events, 0});
    copies.push_back(std::move(*copy));
  }
  return !local.empty() && poll(local.data(), local.size(), 0) > 0;
}

// A blocking read-like call on one descriptor.
bool descriptor_blocks(const ProcessAccess &tracee, int fd) {
  auto copy = tracee.duplicate_fd(fd);
  if (!copy)
    return false;
  const int flags = fcntl(copy->get(), F_GETFL);
  if (flags < 0 || (flags & O_NONBLOCK) != 0)
    return false;
  pollfd entry{copy->get(), POLLIN, 0};
  return poll(&entry, 1, 0) == 0;
}

// The call's timeout: nothing waits forever, zero does not wait.
Result<std::optional<std::chrono::nanoseconds>>
read_timeout(const ProcessAccess &tracee, Timeout arg,
             const std::array<std::uint64_t, 6> &args) {
  using std::chrono::nanoseconds;
  using Kind = Timeout::Kind;
  const std::uint64_t value = args[arg.arg];
  switch (arg.kind) {
  case Kind::kNone:
    return std::optional<nanoseconds>();
  case Kind::kMillis: {
    const int millis = static_cast<int>(value);
    if (millis < 0)
      return std::optional<nanoseconds>();
    return std::optional<nanoseconds>(std::chrono::milliseconds(millis));
  }
  case Kind::kTimespec: {
    if (value == 0)
      return std::optional<nanoseconds>();
    auto time = tracee.read(RemotePtr<timespec>(value));
    if (!time)
      return time.error();
    return std::optional(from_timespec(*time));
  }
  case Kind::kTimeval: {
    if (value == 0)
      return std::optional<nanoseconds>();
    auto time = tracee.read(RemotePtr<timeval>(value));
    if (!time)
      return time.error();
    return std::optional<nanoseconds>(std::chrono::seconds(time->tv_sec) +
                                      std::chrono::microseconds(time->tv_usec));
  }
  }
  return std::optional<nanoseconds>();
}

Result<std::vector<pollfd>> read_pollfds(const ProcessAccess &tracee,
                                         std::uint64_t fds,
                                         std::uint64_t count) {
  std::vector<pollfd> wanted(count);
  const iovec remote{reinterpret_cast<void *>(fds), count * sizeof(pollfd)};
  if (auto read = tracee.read(std::span(&remote, 1),
                              std::as_writable_bytes(std::span(wanted)));
      !read)
    return read.error();
  return wanted;
}

// The descriptors of select's three sets, as poll would ask for them.
Result<std::vector<pollfd>>
select_pollfds(const ProcessAccess &tracee,
               const std::array<std::uint64_t, 6> &args) {
  const int nfds =
      static_cast<int>(std::min<std::uint64_t>(args[0], FD_SETSIZE));
  const std::array<short, 3> events{POLLIN, POLLOUT, POLLPRI};
  std::vector<pollfd> wanted;
  for (std::size_t set = 0; set < events.size(); ++set) {
    if (args[1 + set] == 0)
      continue;
    auto bits = tracee.read(RemotePtr<fd_set>(args[1 + set]));
    if (!bits)
      return bits.error();
    for (int fd = 0; fd < nfds; ++fd)
      if (FD_ISSET(fd, &*bits))
        wanted.push_back({fd, events[set], 0});
  }
  return wanted;
}

} // namespace

Result<bool> select_blocks(const ProcessAccess &tracee,
                           const Syscall & /*call*/,
                           const std::array<std::uint64_t, 6> &args) {
  auto wanted = select_pollfds(tracee, args);
  if (!wanted)
    return wanted.error();
  return !any_ready(tracee, *wanted);
}

// Whether the epoll instance epfd has fd registered: its fdinfo has a line
// "tfd: FD events: ..." per registration.
static Result<bool> epoll_watches(const ProcessAccess &tracee, int epfd,
                                  int fd) {
  auto info = tracee.proc_file(fmt::format("fdinfo/{}", epfd).c_str());
  if (!info)
    return info.error();
  const std::string wanted = fmt::format("tfd: {:8} ", fd);
  return info->find(wanted) != std::string::npos;
}

Result<bool> fd_blocks(const ProcessAccess &tracee, const Syscall & /*call*/,
                       const std::array<std::uint64_t, 6> &args) {
  return descriptor_blocks(tracee, static_cast<int>(args[0]));
}

Result<bool> recv_blocks(const ProcessAccess &tracee, const Syscall &call,
                         const std::array<std::uint64_t, 6> &args) {
  return (args.at(static_cast<std::size_t>(call.flags_arg)) & MSG_DONTWAIT) ==
             0 &&
         descriptor_blocks(tracee, static_cast<int>(args[0]));
}

Result<bool> poll_blocks(const ProcessAccess &tracee, const Syscall & /*call*/,
                         const std::array<std::uint64_t, 6> &args) {
  auto wanted = read_pollfds(tracee, args[0], args[1]);
  if (!wanted)
    return wanted.error();
  return !any_ready(tracee, *wanted);
}

Result<bool> epoll_blocks(const ProcessAccess &tracee, const Syscall & /*call*/,
                          const std::array<std::uint64_t, 6> &args) {
  return !any_ready(tracee,
                    std::array{pollfd{static_cast<int>(args[0]), POLLIN, 0}});
}

namespace {

// What a trapped input call would do if it ran now.
struct Wait {
  bool blocks = false; // nothing it waits for is ready and it may wait
  // How long it may wait, on the virtual clock; nothing: forever.
  std::optional<std::chrono::nanoseconds> timeout;
};

Result<Wait> would_block(const ProcessAccess &tracee, const Syscall &call,
                         const Registers &regs) {
  const std::array<std::uint64_t, 6> args = regs.args();
  auto timeout = read_timeout(tracee, call.timeout, args);
  if (!timeout)
    return timeout.error();
  if (*timeout && **timeout <= std::chrono::nanoseconds(0))
    return Wait{};
  auto blocks = call.blocks(tracee, call, args);
  if (!blocks)
    return blocks.error();
  return Wait{*blocks, *timeout};
}

// The Recheck of a held input call: it runs once something is ready.
Result<std::optional<Action>> input_over(const ProcessAccess &tracee,
                                         const Syscall &call,
                                         const Registers &regs) {
  auto wait = would_block(tracee, call, regs);
  if (!wait)
    return wait.error();
  return wait->blocks ? std::nullopt : std::optional(Action::run());
}

} // namespace

Result<Action> wait_for_input(SeccompStop &stop) {
  auto wait = would_block(stop.tracee, stop.call, stop.regs);
  if (!wait)
    return wait.error();
  if (!wait->blocks)
    return Action::run();
  std::optional<std::chrono::nanoseconds> deadline;
  if (wait->timeout) {
    stop.environment.note(executor::Source::kTimedWait, stop.regs);
    deadline = stop.environment.clock().elapsed() + *wait->timeout;
  }
  return Action::hold(deadline, std::nullopt, input_over);
}

namespace {

// Action::After of a read or recvfrom on a NETLINK_ROUTE socket: its
// buffer is argument 1, its length argument 2; with MSG_TRUNC the result
// may be longer.
Result<void> zero_read_times(ProcessAccess &tracee, const Registers &entered,
                             long result) {
  if (result <= 0)
    return {};
  return zero_route_times_at(
      tracee, entered.arg(1),
      std::min(static_cast<std::uint64_t>(result), entered.arg(2)));
}

// The same for recvmsg: its msghdr is argument 1.
Result<void> zero_message_times(ProcessAccess &tracee, const Registers &entered,
                                long result) {
  if (result <= 0)
    return {};
  return zero_route_times_in(tracee, entered.arg(1),
                             static_cast<std::uint64_t>(result));
}

// The same for recvmmsg: its mmsghdr array is argument 1; it returns how
// many messages it received.
Result<void> zero_each_message_times(ProcessAccess &tracee,
                                     const Registers &entered, long result) {
  if (result <= 0)
    return {};
  return zero_route_times_in_each(tracee, entered.arg(1),
                                  static_cast<std::uint64_t>(result));
}

// The target's fd of the call (argument 0), duplicated.
std::optional<UniqueFd> fd_of(const SeccompStop &stop) {
  return stop.tracee.duplicate_fd(static_cast<int>(stop.regs.arg(0)));
}

// wait_for_input, and on a NETLINK_ROUTE socket the times of what it
// receives zeroed by after at its exit (a MSG_PEEK leaves the reply
// queued: the read that takes it is rewritten the same way). socket: the
// target's fd, duplicated (nothing: it could not be).
Result<Action> receive(SeccompStop &stop, Action::After after,
                       const std::optional<UniqueFd> &socket) {
  auto action = wait_for_input(stop);
  if (!action || action->kind == Action::Kind::kAnswer)
    return action;
  if (socket && is_route_socket(*socket)) {
    stop.environment.note(executor::Source::kNetlink, executor::Via::kSyscall);
    action->after = after;
  }
  return action;
}

} // namespace

Result<Action> on_read(SeccompStop &stop) {
  // One duplicate for both: what the file is, and whether it is a socket
  // whose replies are rewritten.
  const std::optional<UniqueFd> file = fd_of(stop);
  if (file) {
    auto answered = stop.environment.answer_read(
        stop.tracee, *file, stop.regs.arg(1), stop.regs.arg(2), std::nullopt);
    if (!answered)
      return answered.error();
    if (*answered)
      return Action::answer(**answered);
  }
  return receive(stop, zero_read_times, file);
}

Result<Action> on_pread(SeccompStop &stop) {
  const std::optional<UniqueFd> file = fd_of(stop);
  if (!file)
    return Action::run();
  auto answered = stop.environment.answer_read(
      stop.tracee, *file, stop.regs.arg(1), stop.regs.arg(2), stop.regs.arg(3));
  if (!answered)
    return answered.error();
  return *answered ? Action::answer(**answered) : Action::run();
}

Result<Action> on_readv(SeccompStop &stop) {
  if (auto file = fd_of(stop))
    if (const std::optional<ProcTimes> kind = proc_times_of_fd(*file))
      stop.environment.note(*kind == ProcTimes::kOther
                                ? executor::Source::kProcOther
                                : executor::Source::kProcVector,
                            executor::Via::kSyscall);
  return wait_for_input(stop);
}

Result<Action> on_recvfrom(SeccompStop &stop) {
  return receive(stop, zero_read_times, fd_of(stop));
}

Result<Action> on_recvmsg(SeccompStop &stop) {
  return receive(stop, zero_message_times, fd_of(stop));
}

Result<Action> on_recvmmsg(SeccompStop &stop) {
  return receive(stop, zero_each_message_times, fd_of(stop));
}

Result<bool> waits_on(const ProcessAccess &tracee, const Syscall &call,
                      const Registers &regs, int fd) {
  const std::array<std::uint64_t, 6> args = regs.args();
  const auto among = [fd](const std::vector<pollfd> &wanted) {
    return std::ranges::any_of(
        wanted, [fd](const pollfd &entry) { return entry.fd == fd; });
  };
  Result<std::vector<pollfd>> wanted = std::vector<pollfd>();
  // The descriptors a row's Blocks test looks at, by the test.
  if (call.blocks == fd_blocks || call.blocks == recv_blocks)
    return static_cast<int>(args[0]) == fd;
  if (call.blocks == epoll_blocks)
    return epoll_watches(tracee, static_cast<int>(args[0]), fd);
  if (call.blocks == poll_blocks)
    wanted = read_pollfds(tracee, args[0], args[1]);
  else if (call.blocks == select_blocks)
    wanted = select_pollfds(tracee, args);
  if (!wanted)
    return wanted.error();
  return among(*wanted);
}

Result<void> expire(ProcessAccess &tracee, const Syscall &call,
                    Registers regs) {
  using Kind = Timeout::Kind;
  const Timeout arg = call.timeout;
  switch (arg.kind) {
  case Kind::kNone:
    return Error{fmt::format("{} has no timeout to expire", call.name)};
  case Kind::kMillis:
    regs.set_arg(arg.arg, 0);
    break;
  case Kind::kTimespec:
  case Kind::kTimeval: {
    // Below the 128-byte red zone that leaf code may use under rsp; a
    // timeval is as long as a timespec.
    const RemotePtr<timespec> zero((regs.sp() - 512) & ~std::uint64_t{15});
    regs.set_arg(arg.arg, zero.address());
    if (auto written = tracee.write(zero, timespec{}); !written)
      return written.error();
    break;
  }
  }
  return tracee.set_registers(regs);
}

} // namespace cmc::tracer
