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
// setsid and setpgid: they run. The first process leads its group already;
// another that leaves it (a daemon's child, vsftpd's process for a
// connection) is followed outside it (ProcessAccess::leaves_group): cmc
// waits for the target's stops through its process group until then.
// Answering the call instead would be no way out, as servers check that
// they lead their session (vsftpd: "not session leader").
[[nodiscard]] Result<Action> on_leave_group(SeccompStop &stop);

} // namespace cmc::tracer
