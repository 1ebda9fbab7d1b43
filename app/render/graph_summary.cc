#include "app/render/graph_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "app/render/dot_svg.h"
#include "app/render/state_graph.h"

namespace cmc::app {
namespace {

using search::GraphEdge;

std::size_t states_in(const std::vector<GraphLevel> &levels) {
  std::size_t states = 0;
  for (const GraphLevel &level : levels)
    states += level.states;
  return states;
}

std::size_t widest(const std::vector<GraphLevel> &levels) {
  std::size_t most = 0;
  for (const GraphLevel &level : levels)
    most = std::max(most, level.states);
  return most;
}

// The graph as Graphviz draws it, in a figure; "" when it cannot.
std::string drawn(const std::string &dot) {
  auto svg = svg_of_dot(dot);
  if (!svg) {
    fmt::print(stderr, "cmc: the --html page has no graph: {}\n",
               svg.error().message);
    return "";
  }
  return R"(<div class="figure graph" id="graph">)" + *svg + "</div>\n";
}

std::string levels_table(const std::vector<GraphLevel> &levels) {
  std::string html =
      "<table id=\"levels\"><tr><th>depth</th><th>states</th>"
      "<th>transitions from them</th><th>of them merges</th></tr>\n";
  for (std::size_t depth = 0; depth < levels.size(); ++depth)
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                        "</tr>\n",
                        depth, levels[depth].states, levels[depth].transitions,
                        levels[depth].merges);
  return html + "</table>\n";
}

// The summary of a graph too wide to read.
std::string summary(const search::Report &report, const StepNames &names,
                    const std::vector<search::RegionLayout> &layout,
                    const std::vector<GraphLevel> &levels) {
  const std::size_t states = states_in(levels);
  std::string html = fmt::format(
      "<p id=\"graph-summary\">{} states, up to {} at one depth: too wide "
      "to draw here (more than {} at one depth or {} in all), so the "
      "levels are counted below. <code>--dot FILE</code> writes the whole "
      "graph.</p>\n",
      states, widest(levels), kLevelLimit, kGraphLimit);
  html += levels_table(levels);
  if (report.counterexample.empty())
    return html;
  // Below its size limit graph_view draws every state: one state fewer
  // makes it draw the counterexample's neighbourhood.
  const std::string dot =
      state_graph_dot(report, names, layout, std::min(kGraphLimit, states - 1));
  return html +
         "<p>The counterexample's path and the states one step from it:</p>\n" +
         drawn(dot);
}

} // namespace

std::vector<GraphLevel> graph_levels(const search::StateGraph &graph) {
  const std::vector<std::size_t> depths = search::state_depths(graph);
  std::vector<GraphLevel> levels;
  for (const std::size_t depth : depths) {
    if (depth >= levels.size())
      levels.resize(depth + 1);
    ++levels[depth].states;
  }
  for (const GraphEdge &edge : graph.edges) {
    GraphLevel &level = levels.at(depths.at(edge.from));
    ++level.transitions;
    if (edge.reached == GraphEdge::Reached::kMerged)
      ++level.merges;
  }
  return levels;
}

bool too_wide(const std::vector<GraphLevel> &levels) {
  return widest(levels) > kLevelLimit || states_in(levels) > kGraphLimit;
}

std::string graph_figure(const search::Report &report, const StepNames &names,
                         const std::vector<search::RegionLayout> &layout) {
  const std::vector<GraphLevel> levels = graph_levels(*report.graph);
  if (too_wide(levels))
    return summary(report, names, layout, levels);
  return drawn(state_graph_dot(report, names, layout));
}

} // namespace cmc::app
