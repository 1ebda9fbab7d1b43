#include "tracer/input_wait.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <ctime>
#include <vector>

namespace cmc::tracer {
namespace {

// System call arguments in x86-64 order.
std::array<std::uint64_t, 6> arguments(const user_regs_struct &regs) {
  return {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9};
}

// Polls duplicates of the target's descriptors without waiting. A
// descriptor the target does not have makes its call fail at once: ready.
bool any_ready(const Tracee &tracee, std::span<const pollfd> wanted) {
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
bool fd_blocks(const Tracee &tracee, int fd) {
  auto copy = tracee.duplicate_fd(fd);
  if (!copy)
    return false;
  const int flags = fcntl(copy->get(), F_GETFL);
  if (flags < 0 || (flags & O_NONBLOCK) != 0)
    return false;
  pollfd entry{copy->get(), POLLIN, 0};
  return poll(&entry, 1, 0) == 0;
}

// A timespec or timeval timeout argument: null waits forever, zero does
// not wait.
template <typename Timeout>
Result<bool> timeout_waits(const Tracee &tracee, std::uint64_t address) {
  if (address == 0)
    return true;
  auto timeout = tracee.read_value<Timeout>(address);
  if (!timeout)
    return timeout.error();
  const Timeout zero{};
  return std::memcmp(&*timeout, &zero, sizeof zero) != 0;
}

Result<bool> poll_blocks(const Tracee &tracee, std::uint64_t fds,
                         std::uint64_t count, bool waits) {
  if (!waits)
    return false;
  std::vector<pollfd> wanted(count);
  const iovec remote{reinterpret_cast<void *>(fds), count * sizeof(pollfd)};
  if (auto read = tracee.read(std::span(&remote, 1),
                              std::as_writable_bytes(std::span(wanted)));
      !read)
    return read.error();
  return !any_ready(tracee, wanted);
}

Result<bool> select_blocks(const Tracee &tracee,
                           const std::array<std::uint64_t, 6> &args,
                           bool waits) {
  if (!waits)
    return false;
  const int nfds =
      static_cast<int>(std::min<std::uint64_t>(args[0], FD_SETSIZE));
  const std::array<short, 3> events{POLLIN, POLLOUT, POLLPRI};
  std::vector<pollfd> wanted;
  for (std::size_t set = 0; set < events.size(); ++set) {
    if (args[1 + set] == 0)
      continue;
    auto bits = tracee.read_value<fd_set>(args[1 + set]);
    if (!bits)
      return bits.error();
    for (int fd = 0; fd < nfds; ++fd)
      if (FD_ISSET(fd, &*bits))
        wanted.push_back({fd, events[set], 0});
  }
  return !any_ready(tracee, wanted);
}

} // namespace

Result<bool> would_block(const Tracee &tracee, const TrappedSyscall &call,
                         const user_regs_struct &regs) {
  const auto args = arguments(regs);
  const int fd = static_cast<int>(args[0]);
  switch (call.trap) {
  case Trap::kFdInput:
    return fd_blocks(tracee, fd);
  case Trap::kRecv:
    return (args[call.flags_arg] & MSG_DONTWAIT) == 0 && fd_blocks(tracee, fd);
  case Trap::kPoll:
    return poll_blocks(tracee, args[0], args[1],
                       static_cast<int>(args[2]) != 0);
  case Trap::kPpoll: {
    auto waits = timeout_waits<timespec>(tracee, args[2]);
    if (!waits)
      return waits.error();
    return poll_blocks(tracee, args[0], args[1], *waits);
  }
  case Trap::kSelect: {
    auto waits = timeout_waits<timeval>(tracee, args[4]);
    if (!waits)
      return waits.error();
    return select_blocks(tracee, args, *waits);
  }
  case Trap::kPselect: {
    auto waits = timeout_waits<timespec>(tracee, args[4]);
    if (!waits)
      return waits.error();
    return select_blocks(tracee, args, *waits);
  }
  case Trap::kEpollWait:
    return static_cast<int>(args[3]) != 0 &&
           !any_ready(tracee, std::array{pollfd{fd, POLLIN, 0}});
  case Trap::kEpollPwait2: {
    auto waits = timeout_waits<timespec>(tracee, args[3]);
    if (!waits)
      return waits.error();
    return *waits && !any_ready(tracee, std::array{pollfd{fd, POLLIN, 0}});
  }
  case Trap::kListen:
  case Trap::kForeignArch:
    return false;
  }
  return false;
}

} // namespace cmc::tracer
