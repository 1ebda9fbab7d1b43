#include "app/step_report.h"

#include <fmt/format.h>

#include "util/escape.h"

namespace cmc::app {

void print_calls(const std::vector<tracer::TracedCall> &calls,
                 const char *indent) {
  for (const tracer::TracedCall &call : calls) {
    fmt::print("{}{}{}\n", indent, call.text,
               call.vdso_function.empty()
                   ? ""
                   : fmt::format("  [vDSO {}]", call.vdso_function));
    for (std::size_t i = 0; i < call.backtrace.size(); ++i)
      fmt::print("{}    #{} {}\n", indent, i,
                 tracer::describe(call.backtrace[i]));
  }
}

void print_changes(const std::vector<search::RegionLayout> &layout,
                   std::span<const std::byte> before,
                   std::span<const std::byte> after) {
  bool any = false;
  for (const search::RegionLayout &region : layout)
    for (std::size_t i = 0; i < region.length; ++i) {
      const std::size_t at = region.offset + i;
      if (before[at] == after[at])
        continue;
      fmt::print("  changed: {}+{} {:02x} -> {:02x}\n", region.name, i,
                 static_cast<unsigned>(before[at]),
                 static_cast<unsigned>(after[at]));
      any = true;
    }
  if (!any)
    fmt::print("  changed: nothing in the regions\n");
}

void print_responses(const tracer::TargetSpec &spec,
                     const std::vector<std::string> &received) {
  bool any = false;
  for (std::size_t client = 0; client < received.size(); ++client) {
    if (spec.clients.empty() || received[client].empty())
      continue;
    fmt::print("  response to {}: \"{}\"\n", spec.clients.at(client),
               encode_escapes(received[client]));
    any = true;
  }
  if (!any)
    fmt::print("  response: \"{}\"\n",
               encode_escapes(received.empty() ? "" : received.front()));
}

} // namespace cmc::app
