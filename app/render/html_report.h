#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace cmc::app {

// The page of `cmc check --html`: one HTML document that needs nothing
// else (its style inline, no script, no address of anything outside it),
// made from what --json writes, so the two never disagree. check is the
// check's report (report_json with its "replay" filled in); replay the
// counterexample replayed once (replay_report_json), null when there is
// none or its replay failed; graph the inside of the state graph's section
// (graph_figure), "" for none. By the badge, the verdict's first lines and
// caveats as the text report says them ("verdict_lines", "caveats"); a
// "holds" the report calls "qualified" gets an amber badge that says so.
[[nodiscard]] std::string html_report(const nlohmann::json &check,
                                      const nlohmann::json &replay,
                                      const std::string &graph);

} // namespace cmc::app
