#include "app/render/check_page.h"

#include "app/render/graph_summary.h"
#include "app/render/html_report.h"

namespace cmc::app {

std::string check_page(const nlohmann::json &json, const search::Report &report,
                       const StepNames &names,
                       const std::vector<search::RegionLayout> &layout,
                       const nlohmann::json &replayed) {
  const std::string graph =
      report.graph ? graph_figure(report, names, layout) : "";
  return html_report(json, replayed, graph);
}

} // namespace cmc::app
