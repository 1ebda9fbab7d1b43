#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "app/report/report.h"
#include "search/breadth_first.h"
#include "search/state_graph.h"

namespace cmc::app {

// A level of the state graph with more states than this is drawn wider
// than a page: about 40 boxes side by side at a readable size.
inline constexpr std::size_t kLevelLimit = 40;

// What the search found at one depth.
struct GraphLevel {
  std::size_t states = 0;      // found at this depth
  std::size_t transitions = 0; // taken from them
  std::size_t merges = 0;      // of those, to a state found before
};

// By depth from 0, the levels of graph.
[[nodiscard]] std::vector<GraphLevel>
graph_levels(const search::StateGraph &graph);

// Whether a picture of levels is too wide or too large to read: a level of
// more than kLevelLimit states, or more than kGraphLimit states in all.
[[nodiscard]] bool too_wide(const std::vector<GraphLevel> &levels);

// The inside of the page's "State graph" section for the graph the search
// recorded: the whole graph drawn by Graphviz; or, too wide to read, the
// states and transitions per level and, with a counterexample, its path and
// the states one step from it drawn. "" when Graphviz fails (a line on
// stderr says why) and nothing else is to be shown.
[[nodiscard]] std::string
graph_figure(const search::Report &report, const StepNames &names,
             const std::vector<search::RegionLayout> &layout);

} // namespace cmc::app
