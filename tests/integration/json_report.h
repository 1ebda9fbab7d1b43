#pragma once

#include <nlohmann/json.hpp>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {

// report (cmc check --json) without what depends on the clock, the
// machine's speed or how each transition was taken: every key that is a
// time ("elapsed_s", "..._ms") or a rate ("states_per_s"), at any depth;
// "snapshots" (which transitions were restored differs with the workers);
// and "bytes_read_per_state" (a restore writes zeros back into a page of
// anonymous memory the saved state had never touched, which then counts
// as present: beanstalkd 218118 bytes restored, 216353 replayed); "jobs"
// (the workers). What is
// left must be equal for every -j and --mode.
nlohmann::json answers_of(nlohmann::json report);

// The JSON report of a run that must hold (exit 0, verdict "holds"); a
// run without a report is one test failure, and an empty object.
nlohmann::json holding_report(const Outcome &run);

} // namespace cmc::testing
