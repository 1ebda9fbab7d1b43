#pragma once

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handler of a call that writes to the file system (a row with
// paths): it runs when its paths lie in what the run may write; else an
// Error naming the path stops the check.
[[nodiscard]] Result<Action> on_write_path(SeccompStop &stop);

} // namespace cmc::tracer
