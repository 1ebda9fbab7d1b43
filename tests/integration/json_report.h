#pragma once

#include <nlohmann/json.hpp>

namespace cmc::testing {

// report (cmc check --json) without what depends on the clock or the
// machine's speed: every key that is a time ("elapsed_s", "..._ms") or a
// rate ("states_per_s"), at any depth. What is left must be equal for
// every -j.
nlohmann::json without_timings(nlohmann::json report);

} // namespace cmc::testing
