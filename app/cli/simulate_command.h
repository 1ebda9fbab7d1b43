#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>

#include "app/cli/check_command.h"

namespace cmc::app {

// The options of `cmc simulate`: check's for the target, its messages, the
// state and the properties, and the walks'.
struct SimulateOptions {
  CheckOptions check;
  std::size_t runs = 100;      // --runs: walks
  std::size_t depth = 20;      // --depth: steps per walk, at most
  std::uint64_t walk_seed = 0; // --walk-seed: the walks' own randomness
};

// Registers check's options that mean something for random walks, and
// --runs, --depth and --walk-seed.
void add_simulate_options(CLI::App &simulate, SimulateOptions &options);

// Walks, prints the report; returns the exit status (as check's). Throws
// UserError for anything that stops the simulation.
[[nodiscard]] int run_simulate(const SimulateOptions &options);

} // namespace cmc::app
