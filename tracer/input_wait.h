#pragma once

#include <sys/user.h>

#include "tracer/syscall_table.h"
#include "tracer/tracee.h"
#include "util/result.h"

namespace cmc::tracer {

// Decides, at the seccomp stop on entry to a trapped input syscall, whether
// the call would block: nothing it waits for is ready now and it has no
// zero timeout. The target is then quiescent, waiting for input cmc has not
// sent. A finite timeout counts as waiting too (until cmc controls time,
// the timeout is never made to fire).
[[nodiscard]] Result<bool> would_block(const Tracee &tracee,
                                       const TrappedSyscall &call,
                                       const user_regs_struct &regs);

} // namespace cmc::tracer
