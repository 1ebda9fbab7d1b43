#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmc::app {

// The options of `cmc check`, as the user gave them (SPEC "Command-line
// contract").
struct CheckOptions {
  std::vector<std::string> messages; // C escapes not yet decoded
  std::vector<std::string> regions;
  std::string invariant = "none";
  std::optional<std::size_t> max_depth;
  std::optional<std::size_t> max_states;
  unsigned jobs = 0; // 0: all CPUs
  std::string json;  // "" none, "-" stdout
  bool aslr = false;
  std::optional<std::uint16_t> port;
  double step_timeout_s = 10;
  bool show_output = false;
  bool quiet = false;
  std::string tick; // "" none
  std::optional<std::size_t> max_ticks;
  std::uint64_t seed = 0;
  std::vector<std::string> command; // PROGRAM [ARGS...]
};

void add_check_options(CLI::App &check, CheckOptions &options);

// Runs the check and prints its report; returns the exit status. Throws
// UserError for anything that stops the check.
[[nodiscard]] int run_check(const CheckOptions &options);

} // namespace cmc::app
