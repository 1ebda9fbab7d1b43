#pragma once

#include <array>
#include <cstdint>

#include "tracer/process/process_access.h"
#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handler of a trapped input call (accept, recv, poll, epoll_wait...):
// at its seccomp stop, decides whether it would block. It runs if not;
// else it is held, the target quiescent, waiting for input cmc has not
// sent or for its timeout, which fires when a tick of the virtual clock
// passes it (expire).
[[nodiscard]] Result<Action> wait_for_input(SeccompStop &stop);
// read(): of /dev/urandom or /dev/random, answered from the seed; of a
// /proc file with times, from the virtual clock (Environment::answer_read);
// of any other file, a wait for input, whose replies on a NETLINK_ROUTE
// socket have their times zeroed (tracer/net/netlink_times.h).
[[nodiscard]] Result<Action> on_read(SeccompStop &stop);
// pread64(): answered as read(), at its offset; any other file's runs.
[[nodiscard]] Result<Action> on_pread(SeccompStop &stop);
// readv(): a wait for input; of a /proc file with times, listed (it runs).
[[nodiscard]] Result<Action> on_readv(SeccompStop &stop);
// recvfrom(), recvmsg(), recvmmsg(): a wait for input, whose replies on a
// NETLINK_ROUTE socket have their times zeroed.
[[nodiscard]] Result<Action> on_recvfrom(SeccompStop &stop);
[[nodiscard]] Result<Action> on_recvmsg(SeccompStop &stop);
[[nodiscard]] Result<Action> on_recvmmsg(SeccompStop &stop);

// What the input calls wait for (Blocks of their rows): a read-like call
// on its descriptor, argument 0; a recv, unless its flags have
// MSG_DONTWAIT; poll and ppoll; select and pselect6; an epoll wait on the
// epoll descriptor.
[[nodiscard]] Result<bool> fd_blocks(const ProcessAccess &tracee,
                                     const Syscall &call,
                                     const std::array<std::uint64_t, 6> &args);
[[nodiscard]] Result<bool>
recv_blocks(const ProcessAccess &tracee, const Syscall &call,
            const std::array<std::uint64_t, 6> &args);
[[nodiscard]] Result<bool>
poll_blocks(const ProcessAccess &tracee, const Syscall &call,
            const std::array<std::uint64_t, 6> &args);
[[nodiscard]] Result<bool>
select_blocks(const ProcessAccess &tracee, const Syscall &call,
              const std::array<std::uint64_t, 6> &args);
[[nodiscard]] Result<bool>
epoll_blocks(const ProcessAccess &tracee, const Syscall &call,
             const std::array<std::uint64_t, 6> &args);

// Whether the trapped input call at this stop waits, among others, for fd
// (a listening socket: then it waits for a client). An epoll wait waits for
// the descriptors registered with its instance (/proc/PID/fdinfo).
[[nodiscard]] Result<bool> waits_on(const ProcessAccess &tracee,
                                    const Syscall &call, const Registers &regs,
                                    int fd);

// Makes the waiting call at this stop time out at once when resumed: its
// timeout becomes zero. A timeout passed by pointer is replaced by a
// pointer to a zero value written below the target's stack red zone.
[[nodiscard]] Result<void> expire(ProcessAccess &tracee, const Syscall &call,
                                  Registers regs);

} // namespace cmc::tracer
