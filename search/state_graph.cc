#include "search/state_graph.h"

#include "search/nondeterminism.h"

namespace cmc::search {

std::vector<ChangedByte> changed_bytes(std::span<const std::byte> before,
                                       std::span<const std::byte> after) {
  std::vector<ChangedByte> changes;
  for (const std::size_t offset : differing_offsets(before, after))
    changes.push_back({offset, static_cast<std::uint8_t>(before[offset]),
                       static_cast<std::uint8_t>(after[offset])});
  return changes;
}

std::vector<std::size_t> state_depths(const StateGraph &graph) {
  std::vector<std::size_t> depths(graph.changes.size(), 0);
  for (const GraphEdge &edge : graph.edges)
    if (edge.reached == GraphEdge::Reached::kNew)
      depths[edge.to] = depths[edge.from] + 1;
  return depths;
}

void record_state(std::optional<StateGraph> &graph,
                  const executor::Observation &observation,
                  executor::StateKind state) {
  if (!graph)
    return;
  graph->described.push_back(observation.changes);
  std::vector<ChangedByte> &changes = graph->changes.emplace_back();
  if (state == executor::StateKind::kRegions)
    changes = changed_bytes(observation.before, observation.after);
}

void record_edge(std::optional<StateGraph> &graph, std::uint32_t from,
                 const executor::PathStep &action, GraphEdge::Reached reached,
                 std::uint32_t to) {
  if (graph)
    graph->edges.push_back({from, action, reached, to});
}

} // namespace cmc::search
