#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace cmc::app {

// A message sequence chart of a counterexample, as an <svg> element for an
// HTML page. check is a `cmc check --json` report (its replay.clients and
// replay.command name the lifelines: one per client, then the server),
// replay the counterexample replayed once, as `cmc replay --json` reports
// it (replay_report_json). Each step is a row of arrows: its message (or
// disconnect) from its client to the server, a tick on the server, each
// reply from the server to its client, each connection the server closed;
// the step's region changes (its state_changes by name, with the whole
// process as the state) beside it, the step of the violation marked.
// Every text from the target is C-escaped and HTML-escaped.
[[nodiscard]] std::string sequence_chart(const nlohmann::json &check,
                                         const nlohmann::json &replay);

} // namespace cmc::app
