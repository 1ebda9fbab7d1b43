#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/sources.h"

namespace cmc::app {

// The "sources" and "uncontrolled" fields: each source of time or
// randomness used, how it was reached and how cmc controlled it.
void add_sources_json(nlohmann::json &report, const executor::Sources &sources);
// The same as the "time and randomness:" section of a text report.
void print_sources(std::FILE *out, const executor::Sources &sources);
// "NOT CONTROLLED: rdtsc (other): ..." for each source used that cmc does
// not control, as that section names it.
[[nodiscard]] std::vector<std::string>
uncontrolled_sources(const executor::Sources &sources);

} // namespace cmc::app
