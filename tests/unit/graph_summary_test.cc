// The levels of a state graph and when the --html page summarises it.

#include <gtest/gtest.h>

#include <vector>

#include "app/render/graph_summary.h"
#include "app/render/state_graph.h"

namespace cmc::app {
namespace {

using search::GraphEdge;
using Reached = GraphEdge::Reached;

// A root with width children, each with one merge back to the root and a
// fault edge from the first.
search::StateGraph fan(std::uint32_t width) {
  search::StateGraph graph;
  graph.changes.resize(width + 1);
  for (std::uint32_t child = 1; child <= width; ++child)
    graph.edges.push_back({0, child - 1, Reached::kNew, child});
  for (std::uint32_t child = 1; child <= width; ++child)
    graph.edges.push_back({child, 0, Reached::kMerged, 0});
  graph.edges.push_back({1, 1, Reached::kFault});
  return graph;
}

TEST(GraphLevels, CountsStatesTransitionsAndMergesPerDepth) {
  const std::vector<GraphLevel> levels = graph_levels(fan(3));
  ASSERT_EQ(levels.size(), 2U);
  EXPECT_EQ(levels[0].states, 1U);
  EXPECT_EQ(levels[0].transitions, 3U);
  EXPECT_EQ(levels[0].merges, 0U);
  EXPECT_EQ(levels[1].states, 3U);
  EXPECT_EQ(levels[1].transitions, 4U);
  EXPECT_EQ(levels[1].merges, 3U);
}

TEST(GraphLevels, TooWidePastALevelOrTheWholeLimit) {
  EXPECT_FALSE(too_wide(graph_levels(fan(kLevelLimit))));
  EXPECT_TRUE(too_wide(graph_levels(fan(kLevelLimit + 1))));
  // Narrow levels, more states than a picture holds.
  std::vector<GraphLevel> deep(kGraphLimit / 10 + 1, GraphLevel{10, 10, 0});
  EXPECT_TRUE(too_wide(deep));
  deep.pop_back();
  EXPECT_FALSE(too_wide(deep));
}

} // namespace
} // namespace cmc::app
