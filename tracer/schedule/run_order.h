#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace cmc::tracer {

// cmc's one rule for which thread runs next, so that it depends on the
// path alone: of the threads that can run (their indices in order of
// creation, ascending), the first after the one that ran before, wrapping
// round; the lowest when none ran before (at the start of a step).
[[nodiscard]] inline std::optional<std::size_t>
next_to_run(std::span<const std::size_t> runnable,
            std::optional<std::size_t> ran_before) {
  if (runnable.empty())
    return std::nullopt;
  if (ran_before)
    for (const std::size_t index : runnable)
      if (index > *ran_before)
        return index;
  return runnable.front();
}

} // namespace cmc::tracer
