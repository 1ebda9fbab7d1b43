#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "search/property.h"
#include "search/search_report.h"
#include "util/result.h"

namespace cmc::search {

// Makes one executor per worker thread, plus one for the calling thread's
// own replays. It is called on the thread that will use the executor, one
// call at a time, so per-thread set-up (CPU pinning) may go in it.
using ExecutorFactory = std::function<std::unique_ptr<executor::Executor>()>;

// Breadth-first search over paths of the alphabet [0, alphabet_size), each
// path replayed from the initial state, states deduplicated by fingerprint.
// At every state the actions are tried in increasing order, so the reported
// counterexample is the first in that order among the shortest. Results do
// not depend on options.jobs.
// Fails (exit 3) when the target cannot be observed or when replaying the
// same path twice gives different states (nondeterminism), naming the
// region offsets or process locations that differ (unless
// options.mask_volatile masks them).
[[nodiscard]] Result<Report>
breadth_first(const ExecutorFactory &factory, std::size_t alphabet_size,
              const Property &property, const std::vector<RegionLayout> &layout,
              const Options &options);

} // namespace cmc::search
