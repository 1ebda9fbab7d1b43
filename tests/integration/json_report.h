#pragma once

#include <nlohmann/json.hpp>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {

// report (cmc check --json) without what depends on the clock or the
// machine's speed: every key that is a time ("elapsed_s", "..._ms") or a
// rate ("states_per_s"), at any depth. What is left must be equal for
// every -j.
nlohmann::json without_timings(nlohmann::json report);

// The JSON report of a run that must hold (exit 0, verdict "holds"); a
// run without a report is one test failure, and an empty object.
nlohmann::json holding_report(const Outcome &run);

} // namespace cmc::testing
