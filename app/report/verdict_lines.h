#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/report/steps.h"
#include "search/breadth_first.h"

namespace cmc::app {

// What a check's verdict says before anything else. The text report prints
// these lines first, the JSON report carries them ("verdict_lines",
// "caveats", "qualified") and the --html page shows them by its badge: one
// source, so the three never say different things.
struct VerdictLines {
  // The text report's first lines, before a violation's counterexample:
  // "holds under the region abstraction: 2 of 5 merges ...", then "holds:
  // 4 distinct states, ...; every reachable state explored (depth 2)".
  std::vector<std::string> first;
  // What the verdict does not cover, a line each right after it (after a
  // violation's counterexample): no property, sources not controlled,
  // messages read short, masked bytes, a bound on the states, a lossy
  // abstraction under another verdict than holds.
  std::vector<std::string> caveats;
  // A "holds" that claims less than every reachable state explored with
  // every message read and nothing above to qualify it: a bound, a lossy
  // abstraction, a message never read, or any caveat.
  bool qualified = false;
};

// "4 distinct states, 5 dedup merges, 8 transitions".
[[nodiscard]] std::string counts_text(const search::Report &report);

[[nodiscard]] VerdictLines verdict_lines(const search::Report &report,
                                         const StepNames &names);
// {"verdict_lines": [...], "caveats": [...], "qualified": false}: the keys
// of the JSON report that carry lines.
[[nodiscard]] nlohmann::json verdict_lines_json(const VerdictLines &lines);

// "holds under the region abstraction: 7 of 7 merges joined states that
// differ elsewhere (first: heap chunk 5 (32 B)+24 'x' vs 'y', after paths
// [send "x"] and [send "y"])", "" when no audited merge was lossy.
[[nodiscard]] std::string abstraction_caveat(const search::Report &report,
                                             const StepNames &names);

} // namespace cmc::app
