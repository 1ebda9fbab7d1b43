#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/report/steps.h"
#include "app/report/target_options.h"
#include "search/search_report.h"
#include "tracer/control/target_run.h"

namespace cmc::app {

// The options of `cmc check`, as the user gave them (SPEC "Command-line
// contract").
struct CheckOptions {
  TargetOptions target;
  std::optional<std::size_t> max_depth;
  std::optional<std::size_t> max_states;
  std::optional<unsigned> jobs; // none: all CPUs
  std::string json;             // "" none, "-" stdout
  std::string dot;              // "" none: the state graph's file
  std::string html;             // --html FILE: the page; "" none
  bool quiet = false;
  std::optional<std::size_t> max_ticks;
  bool once = false;           // each message at most once per path
  std::size_t preemptions = 0; // switches per step away from a thread
  bool mask_volatile = false;  // mask bytes that differ between runs
  std::string dedup;           // --dedup; "" the default for the options
  bool strict = false;         // a lossy merge of the regions is an error
  // --mode: replay or snapshot; empty: snapshot, but replay with
  // --mask-volatile.
  std::string mode;
  std::optional<std::size_t> snapshot_memory; // MiB per worker
};

void add_check_options(CLI::App &check, CheckOptions &options);

// What check and simulate share once the options are parsed.
// The target to run as the options describe it, its program located;
// throws UserError for bad options.
[[nodiscard]] std::shared_ptr<const tracer::TargetSpec>
check_spec(const CheckOptions &options);
// The workers to run: -j, by default one per CPU. More than 4 per CPU
// (or than 1 per 32 descriptors cmc may open: each worker holds a target,
// its connections, pipes and a network namespace) run no faster and can
// exhaust what the kernel gives one process: capped, with a line saying so.
[[nodiscard]] unsigned job_count(const CheckOptions &options);
// The search's options: workers, bounds, progress, tick, --once, state.
[[nodiscard]] search::Options search_options(const CheckOptions &options,
                                             const tracer::TargetSpec &spec);
// What names the steps and settings in the reports, for jobs workers.
[[nodiscard]] StepNames
step_names(const CheckOptions &options,
           const std::shared_ptr<const tracer::TargetSpec> &spec,
           unsigned jobs);
// "replay it: cmc replay ...", the command that shows the counterexample
// step by step (and "or: cmc replay --from FILE" with a --json file).
void print_replay(std::FILE *out, const CheckOptions &options,
                  const search::Report &report, const StepNames &names);

// Runs the check and prints its report; returns the exit status. Throws
// UserError for anything that stops the check.
[[nodiscard]] int run_check(const CheckOptions &options);

} // namespace cmc::app
