#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/report/report.h"
#include "search/breadth_first.h"

namespace cmc::app {

// The page of `cmc check --html` (html_report) for the check's report and
// json, its --json report, with the state graph the search recorded
// (graph_figure: drawn by Graphviz, or summarised when too wide to read),
// and replayed, the
// counterexample as `cmc replay --json` reports it, for its chart (null: no
// chart).
[[nodiscard]] std::string
check_page(const nlohmann::json &json, const search::Report &report,
           const StepNames &names,
           const std::vector<search::RegionLayout> &layout,
           const nlohmann::json &replayed);

} // namespace cmc::app
