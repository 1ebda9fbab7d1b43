#include "search/report_counts.h"

#include <algorithm>

#include <string>

#include "search/search_report.h"

namespace cmc::search {

void count_coverage(Report &report, std::size_t alphabet_size,
                    executor::ActionId action,
                    const executor::Observation &observation) {
  if (observation.fault ||
      observation.effects.size() != observation.received.size() ||
      observation.effects.empty() || !observation.effects.back().length)
    return;
  const executor::StepEffects &effects = observation.effects.back();
  report.coverage.resize(alphabet_size);
  MessageCoverage &coverage = report.coverage[action];
  ++coverage.transitions;
  if (effects.read_whole())
    ++coverage.read_whole;
  else if (coverage.waits_in.empty())
    coverage.waits_in = effects.waits_in;
}

void count_cost(Report &report, const executor::Observation &observation) {
  if (observation.bytes_read == 0 && observation.bytes_hashed == 0)
    return;
  report.bytes_read += observation.bytes_read;
  report.bytes_hashed += observation.bytes_hashed;
  report.dead_register_bytes += observation.dead_register_bytes;
  report.dead_red_zone_bytes += observation.dead_red_zone_bytes;
  report.dead_frame_bytes += observation.dead_frame_bytes;
  ++report.runs_measured;
}

void count_snapshots(SnapshotCounts &counts,
                     const executor::Observation &observation) {
  ++(observation.restored ? counts.restored : counts.replayed);
  for (const std::string &reason : observation.refusals)
    ++counts.refusals[reason];
  if (observation.snapshot_bytes > counts.memory) {
    counts.memory = observation.snapshot_bytes;
    counts.kept = observation.snapshots_kept;
  }
}

void count_run(Report &report, const executor::Observation &observation) {
  report.sources.merge(observation.sources);
  report.max_threads = std::max(report.max_threads, observation.threads);
  count_cost(report, observation);
  count_snapshots(report.snapshots, observation);
}

} // namespace cmc::search
