#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "executor/executor.h"

namespace cmc::search {

// A state byte a step changed: its offset in the state's bytes (as
// RegionLayout counts them) and its values before and after the step.
struct ChangedByte {
  std::size_t offset = 0;
  std::uint8_t before = 0;
  std::uint8_t after = 0;
};

// The bytes that differ between two states, in offset order (of the bytes
// both have).
[[nodiscard]] std::vector<ChangedByte>
changed_bytes(std::span<const std::byte> before,
              std::span<const std::byte> after);

// One transition of the search, as the search counted it.
struct GraphEdge {
  static constexpr std::uint32_t kNoState =
      std::numeric_limits<std::uint32_t>::max();
  enum class Reached {
    kNew,     // a state not visited before: to's parent is from
    kMerged,  // a visited state: a dedup merge
    kFault,   // none: the target crashed, exited or hung (a violation)
    kNotKept, // a new state beyond Options::max_states, not kept
  };
  std::uint32_t from = 0;
  executor::PathStep action;
  Reached reached = Reached::kNew;
  std::uint32_t to = kNoState; // with kNew and kMerged
};

// The states a search visited and the transitions between them
// (Options::graph), for a picture of the search.
struct StateGraph {
  // By state index, the initial state first, in breadth-first order: the
  // bytes the step from its parent changed (none for the initial state),
  // kept only when the states are the regions (StateKind::kRegions).
  std::vector<std::vector<ChangedByte>> changes;
  // By state index, the same by name when the state is the whole process
  // (Observation::changes).
  std::vector<std::vector<std::string>> described;
  // Every transition counted in Report::transitions, in merge order,
  // whatever the number of jobs.
  std::vector<GraphEdge> edges;
};

// By state index, its depth: one more than its parent's, whose edge to it
// is the one that found it (GraphEdge::Reached::kNew).
[[nodiscard]] std::vector<std::size_t> state_depths(const StateGraph &graph);

// The search's records of graph (Options::graph; nothing when it is
// none), in merge order, whatever the number of jobs: (from, action) order
// within a level, then the level's preempted steps in the order they were
// found (Options::preemptions). record_state: the state just added, the bytes
// its last step changed when the states are the regions (the initial state's
// run has no state before it); record_edge: the transition just counted.
void record_state(std::optional<StateGraph> &graph,
                  const executor::Observation &observation,
                  executor::StateKind state);
void record_edge(std::optional<StateGraph> &graph, std::uint32_t from,
                 const executor::PathStep &action, GraphEdge::Reached reached,
                 std::uint32_t to = GraphEdge::kNoState);

} // namespace cmc::search
