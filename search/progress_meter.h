#pragma once

#include <chrono>
#include <cstddef>

#include "search/search_report.h"

namespace cmc::search {

// Prints a progress line about once a second, from the first second on,
// as TLC's: the time, the depth, the distinct states, the states left on
// the queue (those of this level not expanded yet, and those found for the
// next), and the rate of new states over the last interval and overall.
class ProgressMeter {
public:
  using Clock = std::chrono::steady_clock;

  ProgressMeter(bool enabled, Clock::time_point start)
      : enabled_(enabled), start_(start), last_(start),
        next_(start + std::chrono::seconds(1)) {}

  void update(const Report &report, std::size_t depth, std::size_t queued);

private:
  bool enabled_;
  Clock::time_point start_;
  Clock::time_point last_; // of the last line
  std::size_t last_distinct_ = 0;
  Clock::time_point next_;
};

} // namespace cmc::search
