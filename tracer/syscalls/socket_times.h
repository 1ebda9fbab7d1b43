#pragma once

#include "tracer/syscalls/syscall.h"

namespace cmc::tracer {

// getsockopt: TCP_INFO tells how long packets took and how long ago the
// last came (exim4 keeps it for each connection); its times, rates and
// counters read as zero, its state, options and segment sizes as the
// kernel says.
[[nodiscard]] Result<Action> on_getsockopt(SeccompStop &stop);

} // namespace cmc::tracer
