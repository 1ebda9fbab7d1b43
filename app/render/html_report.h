#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace cmc::app {

// The page of `cmc check --html`: one HTML document that needs nothing
// else (its style inline, no script, no address of anything outside it),
// made from what --json writes, so the two never disagree. check is the
// check's report (report_json with its "replay" filled in); replay the
// counterexample replayed once (replay_report_json), null when there is
// none or its replay failed; graph an <svg> of the state graph
// (svg_of_dot), "" for none.
[[nodiscard]] std::string html_report(const nlohmann::json &check,
                                      const nlohmann::json &replay,
                                      const std::string &graph);

} // namespace cmc::app
