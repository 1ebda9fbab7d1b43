#pragma once

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handlers of the calls that wait for another process: under cmc's
// scheduler no thread sleeps in the kernel, so each is held at its entry
// until what it waits for has happened, then runs (and returns at once).
//
// wait4 and waitid: until a child of the caller's process that the call
// names is a zombie (WNOHANG, and a caller with no child, run at once: the
// kernel answers them). A process group (pid 0 or below -1, P_PGID) is
// taken as any child.
[[nodiscard]] Result<Action> on_wait4(SeccompStop &stop);
[[nodiscard]] Result<Action> on_waitid(SeccompStop &stop);
// rt_sigsuspend and pause: until a signal the wait does not block is
// pending for the thread or its process.
[[nodiscard]] Result<Action> on_sigsuspend(SeccompStop &stop);
[[nodiscard]] Result<Action> on_pause(SeccompStop &stop);
// setsid and setpgid of a process the target started (the first process
// leads its group already, and runs them): an Error. cmc waits for the target's
// stops through its process group, and a process that left it (a daemon's
// child) would run on unseen; answering the call instead is no way out, as
// servers check that they lead their session (vsftpd: "not session leader").
[[nodiscard]] Result<Action> on_leave_group(SeccompStop &stop);

} // namespace cmc::tracer
