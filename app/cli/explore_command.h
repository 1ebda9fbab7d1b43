#pragma once

#include <CLI/CLI.hpp>

#include "app/report/target_options.h"
#include "app/report/trace_output.h"

namespace cmc::app {

void add_explore_options(CLI::App &explore, TargetOptions &options,
                         TraceOptions &trace);

// Starts the target and reads commands: from a terminal with a prompt,
// history and tab completion (libedit), else line by line with no
// prompt. Returns the exit status; throws UserError when the target
// cannot start.
[[nodiscard]] int run_explore(const TargetOptions &options,
                              const TraceOptions &trace);

} // namespace cmc::app
