#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/report/report.h"
#include "app/report/target_options.h"
#include "app/report/trace_output.h"

namespace cmc::app {

// The options of `cmc replay`. Options given override the report's.
struct ReplayOptions {
  TargetOptions target;
  std::string from; // a `cmc check --json` report, or ""
  // By hand: message texts, "tick" (of --tick); with --client,
  // "NAME:TEXT" and "NAME:disconnect".
  std::vector<std::string> steps;
  // "STEP:POINT[,POINT...]": step STEP (from 1) of --steps switches threads
  // at those preemption points (cmc check --preemptions).
  std::vector<std::string> preempt;
  bool backtrace = false;
  bool startup = false; // also list the calls before the first step
  TraceOptions trace;   // -s, -e trace=, -o
  std::string json;     // --json FILE: what each step did; "" none
};

void add_replay_options(CLI::App &replay, ReplayOptions &options);

// Runs the steps once, printing what the target did in each; returns 1
// when a violation shows, 0 when none does ("does not reproduce" when the
// report found one with another build or command). Throws UserError, also
// when the report's own build does not show its violation again.
[[nodiscard]] int run_replay(const ReplayOptions &options);

} // namespace cmc::app
