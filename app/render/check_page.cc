#include "app/render/check_page.h"

#include <fmt/format.h>

#include "app/cli/path_replay.h"
#include "app/render/dot_svg.h"
#include "app/render/html_report.h"
#include "app/render/state_graph.h"
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

} // namespace

std::string check_page(const nlohmann::json &json, const search::Report &report,
                       const StepNames &names, const search::Property &property,
                       const std::vector<search::RegionLayout> &layout) {
  std::string graph;
  if (report.graph) {
    if (auto svg = svg_of_dot(state_graph_dot(report, names, layout)))
      graph = std::move(*svg);
    else
      fmt::print(stderr, "cmc: the --html page has no graph: {}\n",
                 svg.error().message);
  }
  // An interrupted search keeps its counterexample, but has no verdict.
  if (json.at("verdict") != "violated")
    return html_report(json, nullptr, graph);
  return html_report(json, replayed_counterexample(report, names, property),
                     graph);
}

} // namespace cmc::app
