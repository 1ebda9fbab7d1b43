// The state graph a search records (search::Options::graph) and its
// picture in Graphviz DOT (cmc check --dot).

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/render/state_graph.h"
#include "fake_executor.h"
#include "search/breadth_first.h"
#include "sticky_kv.h"

namespace cmc::app {
namespace {

using executor::ActionId;
using executor::PathStep;
using fake::Bytes;
using fake::FakeSystem;
using fake::StepOutcome;
using search::GraphEdge;
using search::StateGraph;
using search::kv::check;
using search::kv::error_of;
using search::kv::kCells;
using search::kv::set_cell;
using search::kv::set_cell_buggy;
using search::kv::zeros;
using Reached = GraphEdge::Reached;

search::Report searched(FakeSystem &system, unsigned jobs,
                        std::size_t max_states = SIZE_MAX) {
  search::Options options;
  options.graph = true;
  options.jobs = jobs;
  options.max_states = max_states;
  const Result<search::Report> report = check(system, 2, kCells, options);
  EXPECT_TRUE(report.ok()) << error_of(report);
  return report.ok() ? *report : search::Report{};
}

// kv with cells cells, each set by a message.
StepNames kv_names(std::size_t cells = 2) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  for (std::size_t cell = 0; cell < cells; ++cell)
    spec->messages.push_back(fmt::format("SET {}\n", char('a' + cell)));
  spec->regions = {decoder::Region{"cmc_state", 0, cells}};
  spec->state = executor::StateKind::kRegions;
  StepNames names;
  names.spec = spec;
  return names;
}

bool same_edges(const StateGraph &a, const StateGraph &b) {
  return std::equal(a.edges.begin(), a.edges.end(), b.edges.begin(),
                    b.edges.end(), [](const GraphEdge &x, const GraphEdge &y) {
                      return x.from == y.from && x.action == y.action &&
                             x.reached == y.reached && x.to == y.to;
                    });
}

std::size_t count_of(const std::string &text, const std::string &part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size()))
    ++count;
  return count;
}

TEST(StateGraph, NothingIsRecordedUnlessAsked) {
  FakeSystem kv(zeros(2), set_cell);
  const Result<search::Report> report = check(kv, 2, kCells);
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_FALSE(report->graph.has_value());
}

// The seed's diamond: 4 states, 3 transitions that found them, 5 merges,
// in (from, action) order whatever the number of jobs.
TEST(StateGraph, RecordsEveryTransitionInOrder) {
  FakeSystem kv(zeros(2), set_cell);
  const search::Report report = searched(kv, 1);
  ASSERT_TRUE(report.graph.has_value());
  const StateGraph &graph = *report.graph;
  ASSERT_EQ(graph.changes.size(), report.distinct_states);
  ASSERT_EQ(graph.edges.size(), report.transitions);
  EXPECT_EQ(std::count_if(graph.edges.begin(), graph.edges.end(),
                          [](const GraphEdge &edge) {
                            return edge.reached == Reached::kMerged;
                          }),
            static_cast<std::ptrdiff_t>(report.dedup_merges));
  EXPECT_TRUE(std::is_sorted(graph.edges.begin(), graph.edges.end(),
                             [](const GraphEdge &a, const GraphEdge &b) {
                               return std::tie(a.from, a.action) <
                                      std::tie(b.from, b.action);
                             }));
  // State 2 is {0, 1}: SET b from the initial state set cell 1.
  EXPECT_EQ(graph.edges[1].to, 2U);
  EXPECT_EQ(graph.edges[1].reached, Reached::kNew);
  ASSERT_EQ(graph.changes[2].size(), 1U);
  EXPECT_EQ(graph.changes[2][0].offset, 1U);
  EXPECT_EQ(graph.changes[2][0].before, 0);
  EXPECT_EQ(graph.changes[2][0].after, 1);
  EXPECT_TRUE(graph.changes[0].empty());

  FakeSystem again(zeros(2), set_cell);
  EXPECT_TRUE(same_edges(graph, *searched(again, 4).graph));
}

// kv whose B crashes once cell 0 is set.
StepOutcome crash_on_b(const Bytes &state, ActionId action) {
  if (action == 1 && state[0] == std::byte{1})
    return StepOutcome(executor::Fault{
        .kind = executor::Fault::Kind::kSignal, .code = SIGSEGV, .step = 0});
  return set_cell(state, action);
}

TEST(StateGraph, RecordsACrashAndStatesNotKept) {
  FakeSystem kv(zeros(2), crash_on_b);
  const search::Report crashed = searched(kv, 2);
  ASSERT_EQ(crashed.verdict, search::Verdict::kViolated);
  const GraphEdge &last = crashed.graph->edges.back();
  EXPECT_EQ(last.reached, Reached::kFault);
  EXPECT_EQ(last.to, GraphEdge::kNoState);
  EXPECT_EQ(crashed.graph->edges.size(), crashed.transitions);

  FakeSystem bounded(zeros(2), set_cell);
  const search::Report cut = searched(bounded, 1, 2);
  EXPECT_EQ(cut.graph->changes.size(), 2U);
  EXPECT_EQ(cut.graph->edges.size(), cut.transitions);
  EXPECT_EQ(cut.graph->edges[1].reached, Reached::kNotKept);
}

TEST(StateGraph, DotDrawsACrashAsANodeOfItsOwn) {
  FakeSystem kv(zeros(2), crash_on_b);
  const search::Report report = searched(kv, 1);
  ASSERT_EQ(report.counterexample, (std::vector<PathStep>{0, 1}));
  const std::string dot = state_graph_dot(report, kv_names(), kCells);
  EXPECT_NE(dot.find("  fault [label=\"" + report.violation +
                     "\", shape=octagon, color=red];\n"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find(R"(  s1 -> fault [label="send \"SET b\\n\"", color=red)"),
            std::string::npos)
      << dot;
  EXPECT_EQ(count_of(dot, " -> s") + count_of(dot, " -> fault"),
            report.transitions)
      << dot;
}

TEST(StateGraph, DotStringsEscapeWhatDotWouldRead) {
  EXPECT_EQ(dot_string("send \"x\""), R"("send \"x\"")");
  EXPECT_EQ(dot_string(R"(send "LOCK\n")"), R"("send \"LOCK\\n\"")");
  // A raw newline, a control byte, DEL and a byte that is not UTF-8: shown
  // as \xHH, whose backslash DOT must not read as an escape (\n, \l, \N).
  EXPECT_EQ(dot_string(std::string("a\nb\x01\x7f\xff", 6)),
            R"("a\\x0ab\\x01\\x7f\\xff")");
  EXPECT_EQ(dot_string(std::string("\0N", 2)), R"("\\x00N")");
  EXPECT_EQ(dot_string(""), R"("")");
}

// A binary tree of 15 states (state s steps to 2s+1 and 2s+2 with actions
// 0 and 1); the leaves' action 0 returns to the initial state.
StateGraph binary_tree() {
  StateGraph graph;
  graph.changes.resize(15);
  for (std::uint32_t state = 0; state < 15; ++state) {
    if (state < 7) {
      graph.edges.push_back({state, 0, Reached::kNew, 2 * state + 1});
      graph.edges.push_back({state, 1, Reached::kNew, 2 * state + 2});
    } else {
      graph.edges.push_back({state, 0, Reached::kMerged, 0});
    }
  }
  return graph;
}

std::vector<std::uint32_t> drawn_states(const GraphView &view) {
  std::vector<std::uint32_t> states;
  for (std::uint32_t state = 0; state < view.states.size(); ++state)
    if (view.states[state])
      states.push_back(state);
  return states;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>>
drawn_edges(const StateGraph &graph, const GraphView &view) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (const std::size_t edge : view.edges)
    edges.emplace_back(graph.edges[edge].from, graph.edges[edge].to);
  return edges;
}

TEST(StateGraph, SmallGraphsAreDrawnWhole) {
  const StateGraph graph = binary_tree();
  const std::vector<PathStep> path{1, 0};
  const GraphView view = graph_view(graph, path, 15);
  EXPECT_EQ(view.part, GraphView::Part::kAll);
  EXPECT_EQ(drawn_states(view).size(), 15U);
  EXPECT_EQ(view.edges.size(), graph.edges.size());
  // 0 -1-> 2 -0-> 5.
  EXPECT_EQ(view.path, (std::vector<std::size_t>{1, 4}));
}

// Over the limit: the path 0 -> 2 -> 5, the states one step from those
// (1, 6, 11, 12), and the edges between them: the leaves' merges into the
// initial state too.
TEST(StateGraph, LargeGraphsShowTheCounterexampleAndItsNeighbours) {
  const StateGraph graph = binary_tree();
  const std::vector<PathStep> path{1, 0};
  const GraphView view = graph_view(graph, path, 14);
  EXPECT_EQ(view.part, GraphView::Part::kCounterexample);
  EXPECT_EQ(drawn_states(view),
            (std::vector<std::uint32_t>{0, 1, 2, 5, 6, 11, 12}));
  using E = std::pair<std::uint32_t, std::uint32_t>;
  EXPECT_EQ(
      drawn_edges(graph, view),
      (std::vector<E>{
          {0, 1}, {0, 2}, {2, 5}, {2, 6}, {5, 11}, {5, 12}, {11, 0}, {12, 0}}));
}

TEST(StateGraph, LargeGraphsWithoutCounterexampleShowTheFirstStates) {
  const StateGraph graph = binary_tree();
  const GraphView view = graph_view(graph, {}, 4);
  EXPECT_EQ(view.part, GraphView::Part::kFirstStates);
  EXPECT_EQ(drawn_states(view), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  using E = std::pair<std::uint32_t, std::uint32_t>;
  EXPECT_EQ(drawn_edges(graph, view), (std::vector<E>{{0, 1}, {0, 2}, {1, 3}}));
}

// A crash reaches no state: its edge is drawn all the same, to a node of
// its own.
TEST(StateGraph, ACrashIsTheLastEdgeOfThePath) {
  StateGraph graph = binary_tree();
  graph.edges[4] = {2, 0, Reached::kFault, GraphEdge::kNoState};
  const std::vector<PathStep> path{1, 0};
  const GraphView view = graph_view(graph, path, 14);
  EXPECT_EQ(view.path, (std::vector<std::size_t>{1, 4}));
  EXPECT_NE(std::find(view.edges.begin(), view.edges.end(), 4U),
            view.edges.end());
  EXPECT_FALSE(view.states[5]);
}

TEST(StateGraph, DotOfKvBugHighlightsTheCounterexample) {
  FakeSystem kv(zeros(2), set_cell_buggy);
  const search::Report report = searched(kv, 2);
  ASSERT_EQ(report.verdict, search::Verdict::kViolated);
  ASSERT_EQ(report.counterexample, (std::vector<PathStep>{1, 0}));
  const std::string dot = state_graph_dot(report, kv_names(), kCells);
  EXPECT_TRUE(dot.starts_with("digraph cmc {\n")) << dot;
  EXPECT_TRUE(dot.ends_with("}\n")) << dot;
  EXPECT_EQ(count_of(dot, "[label="),
            report.distinct_states + 1 + report.transitions)
      << dot; // the graph's label, the states, the transitions
  EXPECT_EQ(count_of(dot, " -> s"), report.transitions) << dot;
  EXPECT_NE(dot.find(R"(s0 [label="#0, initial state", peripheries=2)"),
            std::string::npos)
      << dot;
  // SET b finds state 2, {0, 1}; SET a from there clears cell 1: {1, 0},
  // state 1, found first by SET a alone, whose label names the byte that
  // step changed.
  EXPECT_NE(dot.find(R"(s0 -> s2 [label="send \"SET b\\n\"", color=red)"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find(R"(s2 -> s1 [label="send \"SET a\\n\"", style=dashed, )"
                     R"(color=red)"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find(R"(s1 [label="#1, depth 1\ncmc_state+0 00 -> 01", )"
                     R"(color=red)"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("violated: sticky: byte 1 of cmc_state went 01 -> 00"),
            std::string::npos)
      << dot;
  EXPECT_EQ(dot.find("left out"), std::string::npos) << dot;
  EXPECT_EQ(count_of(dot, "style=dashed"), report.dedup_merges) << dot;
}

TEST(StateGraph, DotSaysWhatItLeftOut) {
  FakeSystem kv(zeros(3), set_cell);
  const std::vector<search::RegionLayout> cells{{"cmc_state", 0, 3}};
  search::Options options;
  options.graph = true;
  const Result<search::Report> report = check(kv, 3, cells, options);
  ASSERT_TRUE(report.ok()) << error_of(report);
  ASSERT_EQ(report->distinct_states, 8U);
  const std::string dot = state_graph_dot(*report, kv_names(3), cells, 4);
  EXPECT_NE(dot.find("more than 4 states: drawn are the first 4 in "
                     "breadth-first order"),
            std::string::npos)
      << dot;
  // The states 0 to 3, the edges from 0 to the others and each one's
  // merge into itself (SET a again, ...).
  EXPECT_EQ(count_of(dot, "\n  s"), 4 + 3 + 3) << dot;
  EXPECT_NE(dot.find(R"(s1 -> s1 [label="send \"SET a\\n\"", style=dashed])"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("left out: 4 of 8 states, 18 of 24 transitions"),
            std::string::npos)
      << dot;
}

} // namespace
} // namespace cmc::app
