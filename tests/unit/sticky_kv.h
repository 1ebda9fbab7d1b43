#pragma once

// What the search's unit tests share: the seed's kv as a fake system, and
// a sticky check of it.

#include <string>
#include <vector>

#include "fake_executor.h"
#include "search/breadth_first.h"
#include "search/property.h"

namespace cmc::search::kv {

// Action a ("SET a") sets cell a; actions beyond the cells change nothing.
inline fake::StepOutcome set_cell(const fake::Bytes &state,
                                  executor::ActionId action) {
  fake::Bytes next = state;
  if (action < next.size())
    next[action] = std::byte{1};
  return next;
}

// kv built -DBUG: SET a (action 0) also clears cell 1.
inline fake::StepOutcome set_cell_buggy(const fake::Bytes &state,
                                        executor::ActionId action) {
  fake::Bytes next = std::get<fake::Bytes>(set_cell(state, action));
  if (action == 0)
    next.at(1) = std::byte{0};
  return next;
}

inline fake::Bytes zeros(std::size_t n) { return fake::Bytes(n, std::byte{0}); }

// kv's two cells, as the region cmc_state.
inline const std::vector<RegionLayout> kCells = {{"cmc_state", 0, 2}};

inline Result<Report> check(fake::FakeSystem &system, std::size_t alphabet_size,
                            const std::vector<RegionLayout> &layout,
                            const Options &options = {}) {
  const StickyProperty sticky(layout);
  return breadth_first(system.factory(), alphabet_size, sticky, layout,
                       options);
}

inline std::string error_of(const Result<Report> &result) {
  return result.ok() ? std::string("(no error)") : result.error().message;
}

} // namespace cmc::search::kv
