#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "executor/executor.h"
#include "search/breadth_first.h"
#include "search/property.h"
#include "search/search_report.h"
#include "util/result.h"

namespace cmc::search {

// What `cmc simulate` asks: walks random paths instead of searching.
struct WalkOptions {
  std::size_t runs = 100; // walks
  std::size_t depth = 20; // steps per walk, at most
  // Walk k draws its steps from std::mt19937_64 seeded by (seed, k): the
  // same walk for the same seed, whatever the number of workers.
  std::uint64_t seed = 0;
  // jobs, progress, stop_requested, tick and max_ticks, once_actions and
  // state as the breadth-first search reads them; the rest is unused.
  Options search;
};

// What the walks found. report holds the counts (distinct states over all
// walks, transitions = steps taken), and with a violation the minimised
// counterexample and what its steps did.
struct WalkReport {
  Report report;
  std::size_t walks = 0; // walked, the violating one included
  std::size_t steps = 0; // taken over all walks
  // With a violation: the walk that found it (from 0), the steps it had
  // taken then, and the replays the minimisation ran.
  std::optional<std::size_t> violating_walk;
  std::vector<executor::PathStep> found;
  std::size_t minimise_runs = 0;
};

// Walks options.runs random paths of the alphabet [0, alphabet_size), each
// from the initial state, each step an action drawn uniformly among those
// enabled after the path so far (--once, --max-ticks), up to options.depth
// steps or the first violation. The walks run in parallel; every count, the
// violating walk (the lowest numbered) and its counterexample do not depend
// on options.search.jobs. The violation's path is then minimised
// (minimise()). Fails (exit 3) when the target cannot be observed or a
// replay of a path passes through another state than its first run.
[[nodiscard]] Result<WalkReport>
random_walks(const ExecutorFactory &factory, std::size_t alphabet_size,
             const Property &property, const std::vector<RegionLayout> &layout,
             const WalkOptions &options);

// A path that fails, and how: the first failing step's violation.
struct Failure {
  std::vector<executor::PathStep> path; // up to the failing step
  std::string violation;
  std::vector<executor::StepEffects> effects;
  std::vector<executor::Frame> backtrace;
};

// Runs path once on executor (which keeps every state: keep_states) and
// checks each step in order as the search does: a fault, the regions
// before -> after, the responses, the whole path. The first failing prefix,
// or nothing when every step holds.
[[nodiscard]] Result<std::optional<Failure>>
first_failure(executor::Executor &executor, const Property &property,
              std::span<const executor::PathStep> path);

// Minimises a failing path as DEMi does: drops one step at a time while
// the path still fails (any violation), each time cut to its first failing
// prefix, until no single step can go. Runs on executor (keep_states);
// counts its runs in *runs. stop_requested, when it says so, ends the
// minimisation with what it has.
[[nodiscard]] Result<Failure>
minimise(executor::Executor &executor, const Property &property,
         Failure failing, std::size_t *runs,
         const std::function<bool()> &stop_requested = {});

} // namespace cmc::search
