#pragma once

#include <cstddef>

#include "search/search_report.h"

namespace cmc::search {

// What the search counts of each run into its Report, in merge order,
// which does not depend on the number of jobs.

// The coverage of the message of action (of alphabet_size actions): how
// often the target read it whole, else where it waited instead.
void count_coverage(Report &report, std::size_t alphabet_size,
                    executor::ActionId action,
                    const executor::Observation &observation);

// Whole-process bytes read and hashed per run.
void count_cost(Report &report, const executor::Observation &observation);

// Runs restored and replayed, why a snapshot was refused, the most memory
// the saved states took.
void count_snapshots(SnapshotCounts &counts,
                     const executor::Observation &observation);

// What every run merged adds, whatever its step reached: its sources of
// time and randomness, its cost and its snapshot counts.
void count_run(Report &report, const executor::Observation &observation);

} // namespace cmc::search
