#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace cmc::app {

// The options of `cmc scan`.
struct ScanOptions {
  std::string binary;
  std::string json;   // "" none, "-" stdout
  bool sites = false; // list every site, not only the inline ones
};

void add_scan_options(CLI::App &scan, ScanOptions &options);

// Lists the system call instructions of the binary and of the shared
// libraries it loads; returns the exit status, throws UserError.
[[nodiscard]] int run_scan(const ScanOptions &options);

} // namespace cmc::app
