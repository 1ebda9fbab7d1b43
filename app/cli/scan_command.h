#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "app/cli/site_marks.h"

namespace cmc::app {

// The options of `cmc scan`.
struct ScanOptions {
  std::vector<std::string> command; // BINARY, or with run PROGRAM [ARGS...]
  std::string json;                 // "" none, "-" stdout
  bool sites = false;               // list every site, not only the inline ones
  bool run = false; // also run the program and mark the sites it reached
  std::vector<std::string> messages; // with run; C escapes not yet decoded
  std::uint64_t seed = 0;
  double step_timeout_s = 10;
  bool show_output = false;
};

void add_scan_options(CLI::App &scan, ScanOptions &options);

// The binary and the shared libraries it loads, each scanned; throws
// UserError.
[[nodiscard]] std::vector<Module> scan_modules(const std::string &binary);

// Prints the inline and unknown sites (with all_sites every site), marked
// observed or never reached when marks are given, and a summary per module.
void print_sites(const std::vector<Module> &modules, bool all_sites,
                 const SiteMarks *marks);
// Prints the vDSO functions a run called and its calls at no scanned site.
void print_calls_seen(const SiteMarks &marks);

// Lists the system call instructions of the binary and of the shared
// libraries it loads; with run, marks each one the program executed in one
// run under the tracer. Returns the exit status, throws UserError.
[[nodiscard]] int run_scan(const ScanOptions &options);

} // namespace cmc::app
