#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "search/breadth_first.h"

namespace cmc::app {

// The alphabet, to name the steps of a counterexample.
struct StepNames {
  std::vector<std::string> messages; // decoded bytes
  std::string tick;                  // "10s"; "" without --tick
  std::size_t max_ticks = 0;
  std::uint64_t seed = 0;
};

// The JSON report of SPEC "JSON report".
[[nodiscard]] nlohmann::json report_json(const search::Report &report,
                                         const StepNames &names);
[[nodiscard]] nlohmann::json error_json(const std::string &message);

// The "sources" and "uncontrolled" fields: each source of time or
// randomness used, how it was reached and how cmc controlled it.
void add_sources_json(nlohmann::json &report, const tracer::Sources &sources);
// The same as the "time and randomness:" section of a text report.
void print_sources(std::FILE *out, const tracer::Sources &sources);

// Writes json to the file destination, "-" for stdout, "" nowhere; throws
// UserError when it cannot.
void write_json(const std::string &destination, const nlohmann::json &json);

// The human-readable summary.
void print_report(std::FILE *out, const search::Report &report,
                  const StepNames &names);

} // namespace cmc::app
