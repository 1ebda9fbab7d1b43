#include "app/report/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/report/json_bytes.h"
#include "app/report/step_report.h"
#include "app/report/verdict_lines.h"
#include "app/version.h"
#include "util/escape.h"
#include "util/fingerprint.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

double per_second(std::size_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

} // namespace

std::string_view state_name(executor::StateKind state) {
  switch (state) {
  case executor::StateKind::kProcess:
    return "process";
  case executor::StateKind::kRaw:
    return "raw";
  case executor::StateKind::kPath:
    return "path";
  case executor::StateKind::kRegions:
    break;
  }
  return "regions";
}

namespace {

// "glibc, 5 arenas walked: 12 chunks in use, 2 unreachable (left out), 3
// free", or the allocator's own words when the heap was hashed raw.
std::string heap_text(const decoder::HeapSummary &heap) {
  if (!heap.canonical)
    return heap.allocator;
  return fmt::format("{}, {} arena{} walked: {} chunks in use, {} unreachable "
                     "(left out), {} free",
                     heap.allocator, heap.arenas, heap.arenas == 1 ? "" : "s",
                     heap.chunks, heap.garbage_chunks, heap.free_chunks);
}

nlohmann::json optional_json(const std::optional<std::size_t> &value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::size_t mean(std::size_t total, std::size_t count) {
  return count == 0 ? 0 : (total + count / 2) / count;
}

// "liveness: 184 bytes dead per state (registers 88, red zones 64, stack
// frames 32)": what the whole-process states left out as no code reads it.
void print_liveness(std::FILE *out, const search::Report &report) {
  if (report.runs_measured == 0)
    return;
  const std::size_t registers =
      mean(report.dead_register_bytes, report.runs_measured);
  const std::size_t red_zones =
      mean(report.dead_red_zone_bytes, report.runs_measured);
  const std::size_t frames =
      mean(report.dead_frame_bytes, report.runs_measured);
  fmt::print(out,
             "liveness: {} bytes dead per state (registers {}, red zones "
             "{}, stack frames {})\n",
             registers + red_zones + frames, registers, red_zones, frames);
}

// Where the named lossy merges differ, the place most of them differ at
// first.
std::vector<std::pair<std::string, std::size_t>>
lossy_places(const search::Abstraction &abstraction) {
  std::vector<std::pair<std::string, std::size_t>> places(
      abstraction.places.begin(), abstraction.places.end());
  std::stable_sort(
      places.begin(), places.end(),
      [](const auto &a, const auto &b) { return a.second > b.second; });
  return places;
}

// "lossy merges differ at: stack of thread 1+24 (5), ...; 5 of 14 named".
void print_lossy_places(std::FILE *out, const search::Report &report) {
  if (!report.abstraction || report.abstraction->places.empty())
    return;
  std::vector<std::string> places;
  for (const auto &[place, merges] : lossy_places(*report.abstraction))
    places.push_back(fmt::format("{} ({})", place, merges));
  fmt::print(out, "lossy merges differ at: {}; {} of {} lossy merges named\n",
             fmt::join(places, ", "), report.abstraction->named,
             report.abstraction->lossy_merges);
}

// "state: the whole process (--dedup process); heap: ...; 120000 bytes
// read, 30000 hashed per state".
void print_state_kind(std::FILE *out, const search::Report &report,
                      const StepNames &names) {
  const tracer::TargetSpec &spec = *names.spec;
  std::string text;
  if (spec.state == executor::StateKind::kRegions) {
    std::vector<std::string> regions;
    for (const decoder::Region &region : spec.regions)
      regions.push_back(region.name);
    text = fmt::format("the regions {} (--dedup regions)",
                       fmt::join(regions, ", "));
    if (report.abstraction)
      text += fmt::format("; {} of {} merges audited against the whole "
                          "process, {} lossy",
                          report.abstraction->merges, report.dedup_merges,
                          report.abstraction->lossy_merges);
  } else if (spec.state == executor::StateKind::kPath) {
    text = "each path (--dedup path: nothing merges)";
  } else {
    text = fmt::format(
        "the whole process{} (--dedup {})",
        spec.state == executor::StateKind::kRaw ? ", every byte as read" : "",
        state_name(spec.state));
  }
  if (!report.heap.allocator.empty())
    text += "; heap: " + heap_text(report.heap);
  if (report.runs_measured != 0)
    text += fmt::format("; {} bytes read, {} hashed per state",
                        mean(report.bytes_read, report.runs_measured),
                        mean(report.bytes_hashed, report.runs_measured));
  fmt::print(out, "state: {}\n", text);
  print_lossy_places(out, report);
  print_liveness(out, report);
}

nlohmann::json path_json(const StepNames &names,
                         std::span<const executor::PathStep> path) {
  nlohmann::json steps = nlohmann::json::array();
  for (const executor::PathStep &step : path)
    steps.push_back(step_json(step_of(*names.spec, step), names.tick));
  return steps;
}

nlohmann::json abstraction_json(const search::Report &report,
                                const StepNames &names) {
  if (!report.abstraction)
    return nullptr;
  const search::Abstraction &abstraction = *report.abstraction;
  nlohmann::json places = nlohmann::json::array();
  for (const auto &[place, merges] : lossy_places(abstraction))
    places.push_back({{"place", place}, {"merges", merges}});
  nlohmann::json json = {{"merges", abstraction.merges},
                         {"lossy_merges", abstraction.lossy_merges},
                         {"first", nullptr},
                         {"first_paths", nullptr},
                         {"named_merges", abstraction.named},
                         {"places", std::move(places)}};
  if (abstraction.first) {
    json["first"] = abstraction.first->difference;
    json["first_paths"] = {path_json(names, abstraction.first->kept),
                           path_json(names, abstraction.first->merged)};
  }
  return json;
}

nlohmann::json snapshots_json(const search::Report &report,
                              const StepNames &names) {
  const search::SnapshotCounts &counts = report.snapshots;
  return {{"mode", names.spec->snapshots ? "snapshot" : "replay"},
          {"restored", counts.restored},
          {"replayed", counts.replayed},
          {"checked", counts.checked},
          {"refusals", counts.refusals},
          {"memory_bytes", counts.memory},
          {"states_kept", counts.kept}};
}

// "snapshots: 9000 transitions restored, 1240 replayed (120 checked
// against a replay); refused: 3 mappings; 12.0 MiB in 200 states kept (the
// most by a worker)".
void print_snapshots(std::FILE *out, const search::Report &report,
                     const StepNames &names) {
  if (!names.spec->snapshots)
    return;
  const search::SnapshotCounts &counts = report.snapshots;
  std::vector<std::string> refusals;
  for (const auto &[reason, count] : counts.refusals)
    refusals.push_back(fmt::format("{} {}", count, reason));
  fmt::print(out,
             "snapshots: {} transitions restored, {} replayed ({} checked "
             "against a replay); refused: {}; {:.1f} MiB in {} states kept "
             "(the most by a worker)\n",
             counts.restored, counts.replayed, counts.checked,
             refusals.empty() ? "none"
                              : fmt::format("{}", fmt::join(refusals, ", ")),
             static_cast<double>(counts.memory) / (1 << 20), counts.kept);
}

nlohmann::json heap_json(const decoder::HeapSummary &heap) {
  if (heap.allocator.empty())
    return nullptr;
  return {{"allocator", heap.allocator},
          {"canonical", heap.canonical},
          {"arenas", heap.arenas},
          {"chunks", heap.chunks},
          {"garbage_chunks", heap.garbage_chunks},
          {"garbage_bytes", heap.garbage_bytes},
          {"free_chunks", heap.free_chunks}};
}

// The settings that change what a state is: --dedup, --once, the threads.
void print_state_settings(std::FILE *out, const search::Report &report,
                          const StepNames &names) {
  print_state_kind(out, report, names);
  if (names.once)
    fmt::print(out, "once: each message at most once per path\n");
  if (report.max_threads > 1)
    fmt::print(out, "threads: up to {}, run one at a time in cmc's order{}\n",
               report.max_threads,
               names.preemptions == 0
                   ? "; no switch inside a step explored (--preemptions N "
                     "explores up to N)"
                   : fmt::format(", switched inside a step at up to {} "
                                 "system calls (orders that need more are "
                                 "not explored)",
                                 names.preemptions));
}

nlohmann::json coverage_json(const search::Report &report,
                             const StepNames &names) {
  nlohmann::json messages = nlohmann::json::array();
  for (std::size_t i = 0;
       i < std::min(report.coverage.size(), names.spec->messages.size()); ++i) {
    const search::MessageCoverage &coverage = report.coverage[i];
    const std::size_t client = names.spec->client_of_message(i);
    nlohmann::json message = {
        {"message", i + 1},
        {"client", names.spec->clients.empty()
                       ? nlohmann::json(nullptr)
                       : nlohmann::json(names.spec->clients.at(client))},
        {"send", names.spec->messages[i]},
        {"transitions", coverage.transitions},
        {"read_whole", coverage.read_whole},
        {"waits_in", nullptr}};
    if (coverage.read_whole < coverage.transitions)
      message["waits_in"] = coverage.waits_in;
    messages.push_back(message);
  }
  return messages;
}

void print_coverage(std::FILE *out, const search::Report &report,
                    const StepNames &names) {
  for (std::size_t i = 0;
       i < std::min(report.coverage.size(), names.spec->messages.size()); ++i)
    if (report.coverage[i].transitions != 0)
      fmt::print(out, "message {}: read whole in {} of {} transitions\n", i + 1,
                 report.coverage[i].read_whole, report.coverage[i].transitions);
}

// The counterexample's step i, and what it did to the connections.
std::string counterexample_step(const search::Report &report,
                                const StepNames &names, std::size_t i) {
  std::string text =
      step_text(step_of(*names.spec, report.counterexample[i]), names.tick);
  if (i < report.counterexample_effects.size())
    text += effects_note(*names.spec, report.counterexample_effects[i]);
  return text;
}

// The counterexample's steps, each with what the target did not read of
// its message; null without a violation.
nlohmann::json counterexample_json(const search::Report &report,
                                   const StepNames &names) {
  if (report.verdict != search::Verdict::kViolated)
    return nullptr;
  nlohmann::json counterexample = nlohmann::json::array();
  for (std::size_t i = 0; i < report.counterexample.size(); ++i) {
    nlohmann::json step =
        step_json(step_of(*names.spec, report.counterexample[i]), names.tick);
    if (i < report.counterexample_effects.size())
      add_effects_json(step, report.counterexample_effects[i]);
    counterexample.push_back(step);
  }
  return counterexample;
}

// The verdict, the counts and the rates.
nlohmann::json verdict_json(const search::Report &report,
                            const StepNames &names) {
  const bool violated = report.verdict == search::Verdict::kViolated;
  const char *verdict = violated ? "violated" : "holds";
  if (report.interrupted)
    verdict = "error";
  return {
      {"verdict", verdict},
      {"complete", report.complete},
      {"distinct_states", report.distinct_states},
      {"dedup_merges", report.dedup_merges},
      {"transitions", report.transitions},
      {"max_depth", report.max_depth},
      {"elapsed_s", report.elapsed_s},
      {"states_per_s", per_second(report.distinct_states, report.elapsed_s)},
      {"transitions_per_s", per_second(report.transitions, report.elapsed_s)},
      {"collision_probability", collision_probability(report.distinct_states)},
      {"counterexample", counterexample_json(report, names)},
      {"violation", violated ? nlohmann::json(report.violation) : nullptr},
      {"error", report.interrupted ? nlohmann::json("interrupted") : nullptr},
  };
}

// The settings the search ran with.
nlohmann::json settings_json(const StepNames &names) {
  return {
      {"tick", names.tick.empty() ? nlohmann::json(nullptr)
                                  : nlohmann::json(names.tick)},
      {"max_ticks", names.max_ticks},
      {"seed", names.seed},
      {"bounds",
       {{"max_depth", optional_json(names.max_depth)},
        {"max_states", optional_json(names.max_states)}}},
      {"jobs", names.jobs},
      {"state", state_name(names.spec->state)},
      {"once", names.once},
      {"preemptions", names.preemptions},
      {"checked", names.no_property ? "crashes, exits and hangs only"
                                    : "properties, crashes, exits and hangs"},
  };
}

// What the search found on the way: the abstraction's merges, the heap,
// the cost of a state, masks, restarts, coverage and snapshots.
nlohmann::json findings_json(const search::Report &report,
                             const StepNames &names) {
  const auto per_run = [&](std::size_t bytes) {
    return report.runs_measured == 0
               ? nlohmann::json(nullptr)
               : nlohmann::json(mean(bytes, report.runs_measured));
  };
  return {
      {"abstraction", abstraction_json(report, names)},
      {"heap", heap_json(report.heap)},
      {"bytes_read_per_state", per_run(report.bytes_read)},
      {"bytes_hashed_per_state", per_run(report.bytes_hashed)},
      {"dead_bytes_per_state",
       report.runs_measured == 0
           ? nlohmann::json(nullptr)
           : nlohmann::json{{"registers", per_run(report.dead_register_bytes)},
                            {"red_zones", per_run(report.dead_red_zone_bytes)},
                            {"stack_frames",
                             per_run(report.dead_frame_bytes)}}},
      {"masked", report.masked},
      {"restarts", report.restarts},
      {"threads", report.max_threads},
      {"coverage", coverage_json(report, names)},
      {"snapshots", snapshots_json(report, names)},
  };
}

} // namespace

nlohmann::json report_json(const search::Report &report,
                           const StepNames &names) {
  nlohmann::json json = report_header();
  json.update(verdict_json(report, names));
  json.update(settings_json(names));
  json.update(findings_json(report, names));
  json.update(verdict_lines_json(verdict_lines(report, names)));
  json["replay"] = nullptr;
  json["backtrace"] = nlohmann::json::array();
  for (const executor::Frame &frame : report.backtrace)
    json["backtrace"].push_back(executor::describe(frame));
  add_sources_json(json, report.sources);
  return json;
}

void add_effects_json(nlohmann::json &step,
                      const executor::StepEffects &effects) {
  if (effects.read_short())
    step["read"] = effects.read ? nlohmann::json(*effects.read) : nullptr;
  if (!effects.closed.empty())
    step["closed_by_server"] = effects.closed;
  if (!effects.preempted.empty())
    step["switches"] = effects.preempted;
}

void print_backtrace(std::FILE *out, const std::vector<executor::Frame> &frames,
                     std::size_t at_most) {
  for (std::size_t i = 0; i < std::min(frames.size(), at_most); ++i)
    fmt::print(out, "  {} #{} {}\n", i == 0 ? "at" : "  ", i,
               executor::describe(frames[i]));
  if (frames.size() > at_most)
    fmt::print(out, "     ...\n");
}

nlohmann::json report_header() {
  return {{"format_version", kReportFormatVersion},
          {"cmc_version", kCmcVersion}};
}

nlohmann::json error_json(const std::string &message) {
  nlohmann::json json = report_header();
  json.update({{"verdict", "error"},
               {"complete", false},
               {"distinct_states", 0},
               {"dedup_merges", 0},
               {"transitions", 0},
               {"max_depth", 0},
               {"counterexample", nullptr},
               {"violation", nullptr},
               {"error", message},
               {"backtrace", nlohmann::json::array()},
               {"sources", nlohmann::json::array()},
               {"uncontrolled", nlohmann::json::array()},
               {"masked", nlohmann::json::array()},
               {"restarts", 0}});
  // The settings and what the search measured: not reached.
  for (const char *key : {"elapsed_s",
                          "states_per_s",
                          "transitions_per_s",
                          "collision_probability",
                          "tick",
                          "max_ticks",
                          "seed",
                          "bounds",
                          "jobs",
                          "state",
                          "abstraction",
                          "heap",
                          "bytes_read_per_state",
                          "bytes_hashed_per_state",
                          "dead_bytes_per_state",
                          "once",
                          "preemptions",
                          "threads",
                          "coverage",
                          "snapshots",
                          "checked",
                          "verdict_lines",
                          "caveats",
                          "qualified",
                          "replay"})
    json[key] = nullptr;
  return json;
}

OutputFile::OutputFile(std::string_view option, std::string what,
                       const std::string &destination)
    : what_(std::move(what)), destination_(destination) {
  if (destination.empty())
    return;
  if (destination == "-") {
    // A closed stdout: a descriptor cmc opens later would take number 1.
    const int flags = fcntl(STDOUT_FILENO, F_GETFL);
    if (flags == -1 || (flags & O_ACCMODE) == O_RDONLY)
      usage(fmt::format("cannot write {} -: stdout is closed or read-only",
                        option));
    return;
  }
  file_.open(destination);
  if (!file_)
    usage(fmt::format("cannot write {} {}: {}", option, destination,
                      std::strerror(errno)));
}

void OutputFile::write(std::string_view text) {
  if (destination_.empty() || done_)
    return;
  done_ = true;
  std::ostream &out = destination_ == "-" ? std::cout : file_;
  errno = 0;
  out << text << std::flush;
  if (!out)
    cannot_check(fmt::format(
        "cannot write {} to {}{}", what_,
        destination_ == "-" ? "stdout" : destination_,
        errno != 0 ? fmt::format(": {}", std::strerror(errno)) : ""));
}

JsonOutput::JsonOutput(const std::string &destination)
    : file_("--json", "the JSON report", destination) {}

void JsonOutput::write(const nlohmann::json &json) {
  const auto text = dump_json(json);
  if (!text)
    cannot_check(text.error().message);
  file_.write(*text + '\n');
}

std::FILE *JsonOutput::text_stream() const {
  return file_.to_stdout() ? stderr : stdout;
}

void print_report(std::FILE *out, const search::Report &report,
                  const StepNames &names) {
  print_report(out, report, names, verdict_lines(report, names),
               "shortest counterexample");
}

void print_report(std::FILE *out, const search::Report &report,
                  const StepNames &names, const VerdictLines &verdict,
                  std::string_view title) {
  for (const std::string &line : verdict.first)
    fmt::print(out, "{}\n", line);
  if (!report.interrupted && report.verdict == search::Verdict::kViolated) {
    print_backtrace(out, report.backtrace, 4);
    fmt::print(out, "{} ({} step{}):\n", title, report.counterexample.size(),
               report.counterexample.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < report.counterexample.size(); ++i)
      fmt::print(out, "  {}. {}\n", i + 1,
                 counterexample_step(report, names, i));
    fmt::print(out, "found after {}\n", counts_text(report));
  }
  for (const std::string &line : verdict.caveats)
    fmt::print(out, "{}\n", line);
  print_state_settings(out, report, names);
  print_coverage(out, report, names);
  print_sources(out, report.sources);
  print_snapshots(out, report, names);
  fmt::print(out,
             "{:.2f} s, {:.0f} distinct states/s, {:.0f} transitions/s; "
             "fingerprint collision probability {:.1e}\n",
             report.elapsed_s,
             per_second(report.distinct_states, report.elapsed_s),
             per_second(report.transitions, report.elapsed_s),
             collision_probability(report.distinct_states));
}

} // namespace cmc::app
