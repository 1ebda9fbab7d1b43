#include "search/progress_meter.h"

#include <fmt/format.h>

#include <cstdio>

namespace cmc::search {

void ProgressMeter::update(const Report &report, std::size_t depth,
                           std::size_t queued) {
  const Clock::time_point now = Clock::now();
  if (!enabled_ || now < next_)
    return;
  next_ = now + std::chrono::seconds(1);
  const double elapsed =
      std::chrono::duration<double>(Clock::now() - start_).count();
  const double interval = std::chrono::duration<double>(now - last_).count();
  const std::size_t found = report.distinct_states - last_distinct_;
  fmt::print(stderr,
             "cmc: progress {:.1f} s: depth {}, {} distinct states, {} "
             "left on queue, {} merges, {} transitions; {:.0f} states/s "
             "now, {:.0f} states/s overall\n",
             elapsed, depth, report.distinct_states, queued,
             report.dedup_merges, report.transitions,
             static_cast<double>(found) / interval,
             static_cast<double>(report.distinct_states) / elapsed);
  last_ = now;
  last_distinct_ = report.distinct_states;
}

} // namespace cmc::search
