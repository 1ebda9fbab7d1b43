#include "app/report/verdict_lines.h"

#include <algorithm>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/report/sources_report.h"

namespace cmc::app {
namespace {

std::string path_text(const StepNames &names,
                      std::span<const executor::PathStep> path) {
  std::vector<std::string> steps;
  for (const executor::PathStep &step : path)
    steps.push_back(step_text(step_of(*names.spec, step), names.tick));
  return fmt::format("[{}]", fmt::join(steps, ", "));
}

// "7 of 7 merges joined states that differ elsewhere (first: ...)", ""
// when no audited merge was lossy.
std::string lossy_merges(const search::Report &report, const StepNames &names) {
  if (!report.abstraction || report.abstraction->lossy_merges == 0)
    return "";
  const search::Abstraction &abstraction = *report.abstraction;
  std::string first;
  if (abstraction.first)
    first = fmt::format(" (first: {}, after paths {} and {})",
                        abstraction.first->difference,
                        path_text(names, abstraction.first->kept),
                        path_text(names, abstraction.first->merged));
  return fmt::format("{} of {} merges joined states that differ elsewhere{}",
                     abstraction.lossy_merges, abstraction.merges, first);
}

// The messages the search sent, with what it found of each.
std::span<const search::MessageCoverage>
sent_coverage(const search::Report &report, const StepNames &names) {
  return std::span(report.coverage)
      .first(std::min(report.coverage.size(), names.spec->messages.size()));
}

std::string waited_in(const search::MessageCoverage &coverage) {
  return coverage.waits_in.empty()
             ? ""
             : fmt::format(": the target waited in {}", coverage.waits_in);
}

// ", but message 2 was never read: the target waited in clock_nanosleep"
// for each message sent but never read whole; "" when every one was.
std::string coverage_caveat(const search::Report &report,
                            const StepNames &names) {
  std::vector<std::string> unread;
  const auto coverage = sent_coverage(report, names);
  for (std::size_t i = 0; i < coverage.size(); ++i)
    if (coverage[i].transitions != 0 && coverage[i].read_whole == 0)
      unread.push_back(fmt::format("message {} was never read{}", i + 1,
                                   waited_in(coverage[i])));
  if (unread.empty())
    return "";
  return fmt::format(", but {}", fmt::join(unread, "; "));
}

// "message 2 was read whole in only 3 of 8 transitions: the target waited
// in read" for each message the target read in some transitions only.
void add_short_reads(std::vector<std::string> &caveats,
                     const search::Report &report, const StepNames &names) {
  const auto coverage = sent_coverage(report, names);
  for (std::size_t i = 0; i < coverage.size(); ++i)
    if (coverage[i].read_whole != 0 &&
        coverage[i].read_whole < coverage[i].transitions)
      caveats.push_back(fmt::format(
          "message {} was read whole in only {} of {} transitions{}", i + 1,
          coverage[i].read_whole, coverage[i].transitions,
          waited_in(coverage[i])));
}

// The first line of a verdict: the counts and how far the search went.
std::string verdict_line(const search::Report &report, const StepNames &names) {
  const std::string counts = counts_text(report);
  if (report.interrupted)
    return fmt::format("interrupted: {} explored so far, up to depth {} (not "
                       "complete; no verdict)",
                       counts, report.max_depth);
  if (report.verdict == search::Verdict::kViolated)
    return fmt::format("violated: {}", report.violation);
  if (report.complete)
    return fmt::format("holds{}: {}; every reachable state explored (depth {})",
                       coverage_caveat(report, names), counts,
                       report.max_depth);
  return fmt::format(
      "holds up to depth {}{}{}: {} (search cut by a bound, not complete)",
      report.max_depth,
      report.ticks_cut
          ? fmt::format(" and {} tick(s) per path", names.max_ticks)
          : "",
      coverage_caveat(report, names), counts);
}

std::vector<std::string> caveats_of(const search::Report &report,
                                    const StepNames &names, bool holds) {
  std::vector<std::string> caveats;
  const std::string lossy = lossy_merges(report, names);
  if (!lossy.empty() && !holds)
    caveats.push_back("region abstraction: " + lossy);
  if (names.no_property)
    caveats.emplace_back("no invariant and no property: checked crashes, "
                         "exits and hangs only");
  // A plugin judges each transition with the path that reached it: a path
  // merged into a state found before is never shown to it, nor what
  // follows it (README, "the caveat of stateful checking").
  if (names.plugins && report.dedup_merges != 0 &&
      names.spec->state != executor::StateKind::kPath)
    caveats.push_back(fmt::format(
        "property plugins saw the first path into each state only ({} paths "
        "merged into a state found before were not shown to them): a "
        "property of what came before needs it in the state or --dedup "
        "path",
        report.dedup_merges));
  if (!report.complete && names.max_states &&
      report.distinct_states >= *names.max_states)
    caveats.push_back(fmt::format("--max-states {}: states beyond the first {} "
                                  "were neither kept nor explored",
                                  *names.max_states, *names.max_states));
  add_short_reads(caveats, report, names);
  if (!report.masked.empty())
    caveats.push_back(
        fmt::format("masked volatile bytes: {} (they differed between two "
                    "runs of one path; the search started again {} time(s))",
                    fmt::join(report.masked, ", "), report.restarts));
  const std::vector<std::string> uncontrolled =
      uncontrolled_sources(report.sources);
  caveats.insert(caveats.end(), uncontrolled.begin(), uncontrolled.end());
  return caveats;
}

} // namespace

std::string counts_text(const search::Report &report) {
  return fmt::format("{} distinct states, {} dedup merges, {} transitions",
                     report.distinct_states, report.dedup_merges,
                     report.transitions);
}

VerdictLines verdict_lines(const search::Report &report,
                           const StepNames &names) {
  const bool holds =
      !report.interrupted && report.verdict == search::Verdict::kHolds;
  VerdictLines lines;
  const std::string lossy = abstraction_caveat(report, names);
  if (!lossy.empty() && holds)
    lines.first.push_back(lossy);
  lines.first.push_back(verdict_line(report, names));
  lines.caveats = caveats_of(report, names, holds);
  lines.qualified = holds && (!report.complete || !lossy.empty() ||
                              !coverage_caveat(report, names).empty() ||
                              !lines.caveats.empty());
  return lines;
}

nlohmann::json verdict_lines_json(const VerdictLines &lines) {
  return {{"verdict_lines", lines.first},
          {"caveats", lines.caveats},
          {"qualified", lines.qualified}};
}

std::string abstraction_caveat(const search::Report &report,
                               const StepNames &names) {
  const std::string lossy = lossy_merges(report, names);
  return lossy.empty() ? "" : "holds under the region abstraction: " + lossy;
}

} // namespace cmc::app
