#pragma once

#include <sys/types.h>

namespace cmc::bench {

// Writes "4" to /proc/PID/clear_refs: the soft-dirty bits clear, and the
// kernel write-protects the pages so that the next write to each, by the
// process or by the kernel on its behalf (a read() into it), sets its bit
// again, through a fault (tracer::kPageSoftDirty).
[[nodiscard]] bool clear_soft_dirty(pid_t pid);

} // namespace cmc::bench
