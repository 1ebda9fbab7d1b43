#pragma once

#include <span>
#include <string>
#include <vector>

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

// Each run of bytes from the locations where a and b differ (in order,
// as decoder::differences lists them), named as describe_difference
// names the run it starts, "; " between them: the first 8 runs and how
// many more ("; and 3 more").
[[nodiscard]] std::string
describe_runs(const decoder::CanonicalState &a,
              const decoder::CanonicalState &b,
              std::span<const decoder::Location> locations);

// Where two merged states differ: each run of bytes named with its values
// (describe_runs), and the byte each run starts at, by name.
struct MergeDifference {
  std::string text;
  std::vector<std::string> places;
};

// The lossy merges of a search named, at most (each is three replays).
inline constexpr std::size_t kLossyMergesNamed = 8;

// Why the region abstraction merged two states whose whole processes
// differ: replays the path of the state kept and the path merged into it
// on executor, which keeps images (Executor::keep_images), and names each
// run of bytes where their last states differ (as describe_runs),
// leaving out the bytes that differ between two runs of the kept path.
// When the replays show no such byte, says why (and names no place): both
// reached the same process this time, they differ only in bytes that
// differ between runs, or only in what cmc adds (the virtual clock,
// clients, files).
[[nodiscard]] Result<MergeDifference>
name_lossy_merge(executor::Executor &executor,
                 std::span<const executor::PathStep> kept,
                 std::span<const executor::PathStep> merged);

} // namespace cmc::search
