#include "app/check_page.h"

#include <fmt/format.h>

#include "app/dot_svg.h"
#include "app/html_report.h"
#include "app/path_replay.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// The replay for the page prints nothing: the check's output is its own.
class QuietWatcher final : public ReplayWatcher {
public:
  void started(const std::vector<tracer::TracedCall> & /*calls*/) override {}
  void stepping(std::size_t /*step*/) override {}
  void stepped(const StepOutcome & /*outcome*/) override {}
};

// The counterexample replayed once, as `cmc replay --json` reports it;
// null when the replay fails.
nlohmann::json replayed_counterexample(const search::Report &report,
                                       const StepNames &names,
                                       const search::Property &property) {
  std::vector<Step> steps;
  for (const tracer::ActionId action : report.counterexample)
    steps.push_back(step_of(*names.spec, action));
  tracer::SyscallTrace trace(false);
  QuietWatcher watcher;
  try {
    return replay_report_json(replay_path(*names.spec, steps,
                                          report.counterexample, names.tick,
                                          property, trace, watcher),
                              report.violation);
  } catch (const UserError &error) {
    fmt::print(stderr,
               "cmc: the --html page has no chart of the counterexample: "
               "its replay failed: {}\n",
               error.what());
    return nullptr;
  }
}

// DOT text as a quoted DOT string.
std::string dot_string(const std::string &text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// PLACEHOLDER for the state graph: until app/state_graph.h's DOT of the
// whole graph lands, the counterexample's path alone, drawn by svg_of_dot.
std::string counterexample_dot(const search::Report &report,
                               const StepNames &names) {
  std::string dot = "digraph path {\n  rankdir=LR;\n  node [shape=circle, "
                    "fontname=\"monospace\", fontsize=11];\n  edge "
                    "[fontname=\"monospace\", fontsize=11];\n";
  const std::size_t last = report.counterexample.size();
  dot += fmt::format("  s{} [shape=doublecircle, color=\"#d93025\"];\n", last);
  for (std::size_t i = 0; i < last; ++i)
    dot += fmt::format(
        "  s{} -> s{} [label={}];\n", i, i + 1,
        dot_string(step_text(step_of(*names.spec, report.counterexample[i]),
                             names.tick)));
  return dot + "}\n";
}

} // namespace

std::string check_page(const nlohmann::json &json, const search::Report &report,
                       const StepNames &names,
                       const search::Property &property) {
  // An interrupted search keeps its counterexample, but has no verdict.
  if (json.at("verdict") != "violated")
    return html_report(json, nullptr, "");
  std::string graph;
  if (auto svg = svg_of_dot(counterexample_dot(report, names)))
    graph = std::move(*svg);
  else
    fmt::print(stderr, "cmc: the --html page has no graph: {}\n",
               svg.error().message);
  return html_report(json, replayed_counterexample(report, names, property),
                     graph);
}

} // namespace cmc::app
