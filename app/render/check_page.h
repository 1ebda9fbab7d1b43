#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/report/report.h"
#include "search/breadth_first.h"
#include "search/property.h"

namespace cmc::app {

// The page of `cmc check --html` (html_report) for the check's report and
// json, its --json report, with the state graph the search recorded (drawn
// by Graphviz; none when it fails, with a line on stderr). A counterexample is
// replayed once, as `cmc replay` would, for its chart; when that replay fails,
// the page has no chart and a line on stderr says why.
[[nodiscard]] std::string
check_page(const nlohmann::json &json, const search::Report &report,
           const StepNames &names, const search::Property &property,
           const std::vector<search::RegionLayout> &layout);

} // namespace cmc::app
