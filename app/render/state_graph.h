#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/report/report.h"
#include "search/breadth_first.h"
#include "search/state_graph.h"

namespace cmc::app {

// A graph of more states than this is drawn in part (graph_view): Graphviz
// lays out a few hundred nodes in about a second, and a picture of more
// is read by nobody.
inline constexpr std::size_t kGraphLimit = 300;

// The part of a search::StateGraph a picture shows.
struct GraphView {
  enum class Part {
    kAll,            // every state
    kCounterexample, // its path and the states one step from it
    kFirstStates,    // the first states in breadth-first order
  };
  Part part = Part::kAll;
  std::vector<bool> states;       // by state index: drawn or not
  std::vector<std::size_t> edges; // the edges drawn, as graph.edges indexes
  // The counterexample's transitions in order, as graph.edges indexes
  // (empty without one).
  std::vector<std::size_t> path;
};

// What to draw of graph: every state when there are at most limit; else,
// with a counterexample (its actions from the initial state), the states
// along it and those one step from them; else the first limit states in
// breadth-first order. The edges drawn are those between states drawn, and
// the counterexample's last when it reached no state (a crash); a
// transition to a state not kept (beyond --max-states) is never drawn.
[[nodiscard]] GraphView
graph_view(const search::StateGraph &graph,
           std::span<const executor::PathStep> counterexample,
           std::size_t limit = kGraphLimit);

// A DOT string: the text in double quotes, '"' and '\' escaped, any byte
// outside printable ASCII written \xHH (shown as such: a newline in a
// target's text does not break the label's line).
[[nodiscard]] std::string dot_string(std::string_view text);

// The states and transitions report.graph recorded (the search ran with
// search::Options::graph), in Graphviz DOT: a node per state with its
// number, depth and what the step to it changed (the region bytes, as
// replay's "changed:" lines, or the whole process's changes by name that
// the search recorded, StateGraph::described); an
// edge per transition, labelled with its step as the text report names it,
// dashed for a dedup merge; the initial state with a double border, the
// counterexample in red; the graph's label the verdict, the counts and
// what was left out (graph_view with limit).
[[nodiscard]] std::string
state_graph_dot(const search::Report &report, const StepNames &names,
                const std::vector<search::RegionLayout> &layout,
                std::size_t limit = kGraphLimit);

} // namespace cmc::app
