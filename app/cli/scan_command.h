#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

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

// Lists the system call instructions of the binary and of the shared
// libraries it loads; with run, marks each one the program executed in one
// run under the tracer. Returns the exit status, throws UserError.
[[nodiscard]] int run_scan(const ScanOptions &options);

} // namespace cmc::app
