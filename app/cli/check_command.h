#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/report/target_options.h"

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

// Runs the check and prints its report; returns the exit status. Throws
// UserError for anything that stops the check.
[[nodiscard]] int run_check(const CheckOptions &options);

} // namespace cmc::app
