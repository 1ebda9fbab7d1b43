#include "tests/integration/json_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace cmc::testing {
namespace {

bool is_timing(std::string_view key) {
  constexpr std::array<std::string_view, 3> kUnits{"_s", "_ms", "_us"};
  return std::ranges::any_of(kUnits, [key](std::string_view unit) {
    return key.size() > unit.size() && key.ends_with(unit);
  });
}

nlohmann::json without_timings(nlohmann::json report) {
  if (report.is_array()) {
    for (auto &item : report)
      item = without_timings(std::move(item));
  } else if (report.is_object()) {
    nlohmann::json kept = nlohmann::json::object();
    for (const auto &[key, value] : report.items())
      if (!is_timing(key))
        kept[key] = without_timings(value);
    report = std::move(kept);
  }
  return report;
}

} // namespace

nlohmann::json answers_of(nlohmann::json report) {
  if (report.is_object())
    for (const char *how : {"snapshots", "bytes_read_per_state", "jobs"})
      report.erase(how);
  return without_timings(std::move(report));
}

nlohmann::json holding_report(const Outcome &run) {
  EXPECT_EQ(run.status, 0) << run.err;
  auto json = run.json();
  if (!json.is_object()) {
    ADD_FAILURE() << "no JSON report: " << run.out << run.err;
    return nlohmann::json::object();
  }
  EXPECT_EQ(json["verdict"], "holds") << run.out;
  return json;
}

} // namespace cmc::testing
