#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/report/report.h"
#include "app/report/target_options.h"
#include "util/result.h"

namespace cmc::app {

// What a `cmc check --json` report gives `cmc replay --from`.
struct ReportPlan {
  std::vector<Step> steps; // the counterexample
  std::string expected;    // the violation it found, "" none
  // The target the check ran, from the "replay" object (command, clients,
  // regions, invariant, forbid_response, properties, seed, port, aslr,
  // writable), and the tick of the counterexample's tick steps.
  TargetOptions target;
  std::string program_hash; // "" when the report does not say
};

// Parses a report and checks it field by field: types, ranges (a port is
// 1-65535), durations, region specs, client names, each step's client one
// of the check's. Strings may be json_bytes objects. No I/O, never throws:
// an Error names the first bad field ("counterexample[2].tick: ...").
[[nodiscard]] Result<ReportPlan> parse_report(std::string_view text);

} // namespace cmc::app
