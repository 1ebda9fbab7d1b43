#include "app/report/sources_report.h"

#include <string_view>

#include <fmt/format.h>

namespace cmc::app {
namespace {

std::string_view via_name(executor::Via via) {
  switch (via) {
  case executor::Via::kSyscall:
    return "syscall";
  case executor::Via::kVdso:
    return "vdso";
  case executor::Via::kOther:
    return "other";
  }
  return "";
}

// Calls visit(info, via, control) for every source used, in table order.
template <typename Visit>
void for_each_used(const executor::Sources &sources, Visit visit) {
  for (std::size_t row = 0;
       row < static_cast<std::size_t>(executor::Source::kCount); ++row) {
    const auto source = static_cast<executor::Source>(row);
    for (const auto via :
         {executor::Via::kSyscall, executor::Via::kVdso, executor::Via::kOther})
      if (sources.used(source, via))
        visit(executor::source_info(source), via,
              executor::control_text(source, sources));
  }
}

// "NOT CONTROLLED: rdtsc (other): ...", "getrandom (syscall): seeded".
std::string source_line(const executor::SourceInfo &info, executor::Via via,
                        const std::string &control) {
  return fmt::format("{}{} ({}): {}",
                     info.controlled ? "" : "NOT CONTROLLED: ", info.name,
                     via_name(via), control);
}

} // namespace

void add_sources_json(nlohmann::json &report,
                      const executor::Sources &sources) {
  nlohmann::json controlled = nlohmann::json::array();
  nlohmann::json uncontrolled = nlohmann::json::array();
  for_each_used(sources, [&](const executor::SourceInfo &info,
                             executor::Via via, const std::string &control) {
    (info.controlled ? controlled : uncontrolled)
        .push_back({{"source", info.name},
                    {"via", via_name(via)},
                    {"control", control}});
  });
  report["sources"] = controlled;
  report["uncontrolled"] = uncontrolled;
}

void print_sources(std::FILE *out, const executor::Sources &sources) {
  fmt::print(out, "time and randomness:{}\n",
             sources == executor::Sources{} ? " none used" : "");
  for_each_used(sources, [&](const executor::SourceInfo &info,
                             executor::Via via, const std::string &control) {
    fmt::print(out, "  {}\n", source_line(info, via, control));
  });
}

std::vector<std::string>
uncontrolled_sources(const executor::Sources &sources) {
  std::vector<std::string> lines;
  for_each_used(sources, [&](const executor::SourceInfo &info,
                             executor::Via via, const std::string &control) {
    if (!info.controlled)
      lines.push_back(source_line(info, via, control));
  });
  return lines;
}

} // namespace cmc::app
