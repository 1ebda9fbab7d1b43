#pragma once

#include <span>
#include <string>

#include "decoder/canonical_state.h"
#include "executor/executor.h"
#include "util/result.h"

namespace cmc::search {

// "heap chunk 5 (32 B)+24 'x' vs 'y'": the bytes of a and b (kept canonical
// states) at location, from there on while they differ (at most 16), as
// escaped text; "heap chunk 7 (32 B) in one state only" for a piece only
// one of them has.
[[nodiscard]] std::string describe_difference(const decoder::CanonicalState &a,
                                              const decoder::CanonicalState &b,
                                              const decoder::Location &at);

// Why the region abstraction merged two states whose whole processes
// differ: replays the path of the state kept and the path merged into it
// on executor, which keeps images (Executor::keep_images), and names the
// first location where their last states differ (describe_difference),
// leaving out the bytes that differ between two runs of the kept path.
// When the replays show no such byte, says why: both reached the same
// process this time, they differ only in bytes that differ between runs,
// or only in what cmc adds (the virtual clock, clients, files).
[[nodiscard]] Result<std::string>
name_lossy_merge(executor::Executor &executor,
                 std::span<const executor::PathStep> kept,
                 std::span<const executor::PathStep> merged);

} // namespace cmc::search
