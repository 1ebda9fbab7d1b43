#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/report.h"
#include "app/target_options.h"

namespace cmc::app {

// The options of `cmc replay`. Options given override the report's.
struct ReplayOptions {
  TargetOptions target;
  std::string from; // a `cmc check --json` report, or ""
  // By hand: message texts, "tick" (of --tick); with --client,
  // "NAME:TEXT" and "NAME:disconnect".
  std::vector<std::string> steps;
  bool backtrace = false;
  bool startup = false; // also list the calls before the first step
};

void add_replay_options(CLI::App &replay, ReplayOptions &options);

// Runs the steps once, printing what the target did in each; returns 1
// when a violation shows, 0 otherwise (with a warning when the report
// said there was one). Throws UserError.
[[nodiscard]] int run_replay(const ReplayOptions &options);

// The "replay" object of a `cmc check --json` report: what `cmc replay
// --from` needs besides the counterexample.
[[nodiscard]] nlohmann::json replay_json(const TargetOptions &options);

// The shell command that replays steps on the target of options.
[[nodiscard]] std::string replay_command_line(const TargetOptions &options,
                                              const std::vector<Step> &steps);

} // namespace cmc::app
