#include "app/render/check_page.h"

#include <fmt/format.h>

#include "app/render/dot_svg.h"
#include "app/render/html_report.h"
#include "app/render/state_graph.h"

namespace cmc::app {

std::string check_page(const nlohmann::json &json, const search::Report &report,
                       const StepNames &names,
                       const std::vector<search::RegionLayout> &layout,
                       const nlohmann::json &replayed) {
  std::string graph;
  if (report.graph) {
    if (auto svg = svg_of_dot(state_graph_dot(report, names, layout)))
      graph = std::move(*svg);
    else
      fmt::print(stderr, "cmc: the --html page has no graph: {}\n",
                 svg.error().message);
  }
  return html_report(json, replayed, graph);
}

} // namespace cmc::app
