#include "app/render/state_graph.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/report/step_report.h"
#include "util/check.h"

namespace cmc::app {
namespace {

using search::GraphEdge;
using search::StateGraph;
using Reached = GraphEdge::Reached;

// Changed bytes named in a state's label; a step that changed more (a
// whole .bss as the region) says how many more.
constexpr std::size_t kChangesShown = 8;

// The edges the counterexample's steps took, in order: from the initial
// state each step is the edge (state, action). (The edges are in merge
// order, which is (from, action) order within a level only without
// --preemptions: each level's preempted steps come after its others.)
std::vector<std::size_t>
path_edges(const StateGraph &graph,
           std::span<const executor::PathStep> counterexample) {
  std::vector<std::size_t> path;
  std::uint32_t state = 0;
  for (const executor::PathStep &action : counterexample) {
    CMC_CHECK(state != GraphEdge::kNoState,
              "a counterexample goes on after a step that reached no state");
    const auto at =
        std::ranges::find_if(graph.edges, [&](const GraphEdge &edge) {
          return edge.from == state && edge.action == action;
        });
    CMC_CHECK(at != graph.edges.end() && at->from == state &&
                  at->action == action,
              "every step of the counterexample is a recorded transition");
    path.push_back(static_cast<std::size_t>(at - graph.edges.begin()));
    state = at->to;
  }
  return path;
}

// Marks the states along the path and those one step from them.
void mark_neighbourhood(const StateGraph &graph, GraphView &view) {
  view.states[0] = true;
  for (const std::size_t edge : view.path)
    if (graph.edges[edge].to != GraphEdge::kNoState)
      view.states[graph.edges[edge].to] = true;
  const std::vector<bool> on_path = view.states;
  for (const GraphEdge &edge : graph.edges)
    if (on_path[edge.from] && edge.to != GraphEdge::kNoState)
      view.states[edge.to] = true;
}

// The inside of a dot_string.
std::string dot_escaped(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      escaped += fmt::format("\\{}", c);
    else if (byte >= 0x20 && byte < 0x7f)
      escaped += c;
    else
      escaped += fmt::format("\\\\x{:02x}", byte);
  }
  return escaped;
}

// A DOT string of lines joined by DOT's centred line break.
std::string dot_lines(const std::vector<std::string> &lines) {
  std::vector<std::string> escaped;
  escaped.reserve(lines.size());
  for (const std::string &line : lines)
    escaped.push_back(dot_escaped(line));
  return fmt::format("\"{}\"", fmt::join(escaped, "\\n"));
}

// What a state is, below its number: what the step to it changed (the
// region bytes, or the whole process by name), else what the state covers.
std::vector<std::string>
state_lines(const StateGraph &graph, std::uint32_t state,
            const StepNames &names,
            const std::vector<search::RegionLayout> &layout) {
  const auto described = [&](const char *kind) {
    if (state < graph.described.size() && !graph.described[state].empty())
      return graph.described[state];
    return std::vector<std::string>{kind};
  };
  switch (names.spec->state) {
  case executor::StateKind::kProcess:
    return described("whole process");
  case executor::StateKind::kRaw:
    return described("whole process, raw");
  case executor::StateKind::kPath:
    return {"its own path"};
  case executor::StateKind::kRegions:
    break;
  }
  std::vector<std::string> lines;
  const std::vector<ByteChange> named =
      name_changes(layout, graph.changes[state]);
  for (std::size_t i = 0; i < std::min(named.size(), kChangesShown); ++i)
    lines.push_back(change_text(named[i]));
  if (named.size() > kChangesShown)
    lines.push_back(
        fmt::format("and {} more bytes", named.size() - kChangesShown));
  return lines;
}

std::string node_line(const search::Report &report, const StepNames &names,
                      const std::vector<search::RegionLayout> &layout,
                      std::uint32_t state, std::size_t depth, bool on_path) {
  const StateGraph &graph = *report.graph;
  std::vector<std::string> lines{
      state == 0 ? "#0, initial state"
                 : fmt::format("#{}, depth {}", state, depth)};
  if (state != 0) {
    std::vector<std::string> what = state_lines(graph, state, names, layout);
    if (what.empty())
      what.emplace_back("no region byte changed");
    lines.insert(lines.end(), what.begin(), what.end());
  }
  std::string attributes;
  if (state == 0)
    attributes += ", peripheries=2";
  if (on_path)
    attributes += ", color=red, penwidth=2";
  return fmt::format("  s{} [label={}{}];\n", state, dot_lines(lines),
                     attributes);
}

std::string edge_line(const search::Report &report, const StepNames &names,
                      const GraphEdge &edge, bool on_path) {
  std::string attributes;
  if (edge.reached == Reached::kMerged)
    attributes += ", style=dashed";
  if (on_path)
    attributes += ", color=red, fontcolor=red, penwidth=3";
  const std::string to = edge.reached == Reached::kFault
                             ? std::string("fault")
                             : fmt::format("s{}", edge.to);
  std::string line = fmt::format(
      "  s{} -> {} [label={}{}];\n", edge.from, to,
      dot_string(step_text(step_of(*names.spec, edge.action), names.tick)),
      attributes);
  if (edge.reached == Reached::kFault)
    line = fmt::format("  fault [label={}, shape=octagon, color=red];\n",
                       dot_string(report.violation)) +
           line;
  return line;
}

std::string verdict_line(const search::Report &report) {
  if (report.interrupted)
    return "interrupted (no verdict)";
  if (report.verdict == search::Verdict::kViolated)
    return "violated: " + report.violation;
  return report.complete ? "holds" : "holds up to a bound (not complete)";
}

// The graph's label: the verdict, the counts and what is not drawn.
std::string graph_label(const search::Report &report, const GraphView &view,
                        std::size_t limit) {
  std::vector<std::string> lines{
      verdict_line(report),
      fmt::format("{} distinct states, {} dedup merges, {} transitions",
                  report.distinct_states, report.dedup_merges,
                  report.transitions)};
  const std::size_t states = report.graph->changes.size();
  const std::size_t edges = report.graph->edges.size();
  const auto drawn_states = static_cast<std::size_t>(
      std::count(view.states.begin(), view.states.end(), true));
  if (view.part == GraphView::Part::kCounterexample)
    lines.push_back(fmt::format("more than {} states: drawn are the "
                                "counterexample and the states one step "
                                "from it",
                                limit));
  if (view.part == GraphView::Part::kFirstStates)
    lines.push_back(fmt::format("more than {} states: drawn are the first {} "
                                "in breadth-first order",
                                limit, limit));
  if (drawn_states < states || view.edges.size() < edges)
    lines.push_back(fmt::format("left out: {} of {} states, {} of {} "
                                "transitions",
                                states - drawn_states, states,
                                edges - view.edges.size(), edges));
  return dot_lines(lines);
}

} // namespace

GraphView graph_view(const StateGraph &graph,
                     std::span<const executor::PathStep> counterexample,
                     std::size_t limit) {
  const std::size_t states = graph.changes.size();
  GraphView view;
  view.path = path_edges(graph, counterexample);
  view.states.assign(states, states <= limit);
  if (states > limit && !view.path.empty()) {
    view.part = GraphView::Part::kCounterexample;
    mark_neighbourhood(graph, view);
  } else if (states > limit) {
    view.part = GraphView::Part::kFirstStates;
    std::fill_n(view.states.begin(), limit, true);
  }
  for (std::size_t i = 0; i < graph.edges.size(); ++i) {
    const GraphEdge &edge = graph.edges[i];
    if (view.states[edge.from] &&
        (edge.reached == Reached::kFault ||
         (edge.to != GraphEdge::kNoState && view.states[edge.to])))
      view.edges.push_back(i);
  }
  return view;
}

std::string dot_string(std::string_view text) {
  return '"' + dot_escaped(text) + '"';
}

std::string state_graph_dot(const search::Report &report,
                            const StepNames &names,
                            const std::vector<search::RegionLayout> &layout,
                            std::size_t limit) {
  CMC_CHECK(report.graph.has_value(), "the search recorded its graph");
  const StateGraph &graph = *report.graph;
  const GraphView view = graph_view(graph, report.counterexample, limit);
  std::vector<bool> on_path(graph.changes.size(), false);
  on_path[0] = !view.path.empty();
  for (const std::size_t edge : view.path)
    if (graph.edges[edge].to != GraphEdge::kNoState)
      on_path[graph.edges[edge].to] = true;
  std::string dot =
      fmt::format("digraph cmc {{\n  graph [label={}, labelloc=t];\n"
                  "  node [shape=box, fontname=monospace];\n"
                  "  edge [fontname=monospace];\n",
                  graph_label(report, view, limit));
  const std::vector<std::size_t> depths = search::state_depths(graph);
  for (std::uint32_t state = 0; state < graph.changes.size(); ++state)
    if (view.states[state])
      dot += node_line(report, names, layout, state, depths[state],
                       on_path[state]);
  for (const std::size_t edge : view.edges)
    dot += edge_line(report, names, graph.edges[edge],
                     std::find(view.path.begin(), view.path.end(), edge) !=
                         view.path.end());
  return dot + "}\n";
}

} // namespace cmc::app
