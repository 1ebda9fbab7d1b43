#include "app/check_command.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "app/replay_command.h"
#include "app/report.h"
#include "app/target_options.h"
#include "decoder/elf_file.h"
#include "decoder/region.h"
#include "search/breadth_first.h"
#include "tracer/process_executor.h"
#include "tracer/watchdog.h"
#include "util/duration.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// Without --region each path is its own state: the tree has no end of its
// own, and there are no bytes for an invariant or a mask.
void check_without_regions(const CheckOptions &options) {
  if (!options.max_depth)
    usage("without --region every path is its own state (no dedup): give "
          "--max-depth, or a --region");
  if (options.target.invariant != "none")
    usage(fmt::format("--invariant {} needs a --region: it is a property of "
                      "region bytes",
                      options.target.invariant));
  if (options.mask_volatile)
    usage("--mask-volatile needs a --region: without one there are no bytes "
          "to mask");
}

std::shared_ptr<const tracer::TargetSpec>
check_spec(const CheckOptions &options) {
  if (options.target.messages.empty())
    usage("give at least one --message");
  if (options.target.regions.empty())
    check_without_regions(options);
  if (options.target.tick.empty() && options.max_ticks)
    usage("--max-ticks needs --tick");
  return target_spec(options.target);
}

search::Options search_options(const CheckOptions &options,
                               const tracer::TargetSpec &spec) {
  search::Options search;
  if (options.max_depth)
    search.max_depth = *options.max_depth;
  if (options.max_states)
    search.max_states = *options.max_states;
  search.jobs = options.jobs != 0
                    ? options.jobs
                    : std::max(1U, std::thread::hardware_concurrency());
  search.progress = !options.quiet;
  if (spec.tick) {
    search.tick = spec.tick_action();
    search.max_ticks = options.max_ticks.value_or(1);
  }
  search.once_actions = options.once ? spec.messages.size() : 0;
  search.path_states = spec.regions.empty();
  search.mask_volatile = options.mask_volatile;
  search.stop_requested = [] {
    return tracer::Watchdog::instance().interrupted();
  };
  return search;
}

// The command that shows the counterexample step by step.
void print_replay(std::FILE *out, const CheckOptions &options,
                  const search::Report &report, const StepNames &names) {
  std::vector<Step> steps;
  for (const tracer::ActionId action : report.counterexample)
    steps.push_back(step_of(*names.spec, action));
  fmt::print(out, "replay it: {}\n",
             replay_command_line(options.target, steps));
  if (!options.json.empty() && options.json != "-")
    fmt::print(out, "       or: cmc replay --from {}\n", options.json);
}

int check(const CheckOptions &options, JsonOutput &json_output) {
  const auto spec = check_spec(options);
  const auto layout = layout_of(spec->regions);
  const auto property = make_check_property(options.target, spec, layout);
  const search::ExecutorFactory factory = [spec] {
    tracer::pin_this_thread();
    return std::make_unique<tracer::ProcessExecutor>(spec);
  };
  auto report = search::breadth_first(factory, spec->alphabet_size(), *property,
                                      layout, search_options(options, *spec));
  if (!report)
    cannot_check(report.error().message);
  StepNames names{spec, spec->tick ? format_duration(*spec->tick) : "",
                  spec->tick ? options.max_ticks.value_or(1) : 0, spec->seed};
  names.once = options.once;
  names.path_states = spec->regions.empty();
  names.no_property = options.target.invariant == "none" &&
                      options.target.forbid_response.empty() &&
                      options.target.properties.empty();
  auto json = report_json(*report, names);
  json["replay"] = replay_json(options.target, spec->launch.program);
  // The verdict first: a JSON file that cannot be written does not hide it.
  std::FILE *out = options.json == "-" ? stderr : stdout;
  print_report(out, *report, names);
  if (report->verdict == search::Verdict::kViolated)
    print_replay(out, options, *report, names);
  json_output.write(json);
  if (report->interrupted)
    return static_cast<int>(ExitCode::kCannotCheck);
  return report->verdict == search::Verdict::kViolated
             ? static_cast<int>(ExitCode::kViolation)
             : static_cast<int>(ExitCode::kHolds);
}

} // namespace

void add_check_options(CLI::App &check, CheckOptions &options) {
  add_target_options(check, options.target);
  check.get_option("--message")->required();
  check.get_option("--region")
      ->description("State to read after every step (repeatable): SYMBOL, "
                    "SYMBOL:LEN or SYMBOL+OFF:LEN, from .symtab or .dynsym. "
                    "Without any, every path is its own state (no dedup; "
                    "needs --max-depth)");
  check.add_option("--max-depth", options.max_depth,
                   "Explore paths of at most N steps");
  check.add_option("--max-states", options.max_states,
                   "Stop after N distinct states");
  check.add_option("-j,--jobs", options.jobs,
                   "Worker threads (default: all CPUs)");
  check.add_option("--json", options.json,
                   "Write the JSON report to FILE (- for stdout)");
  check.add_flag("-q,--quiet", options.quiet, "No progress lines");
  check
      .add_option("--max-ticks", options.max_ticks,
                  "With --tick: at most N ticks per path (default 1)")
      ->check(CLI::PositiveNumber);
  check.add_flag("--once", options.once,
                 "Each message at most once per path (the messages taken "
                 "are then part of the state)");
  check.add_flag("--mask-volatile", options.mask_volatile,
                 "Mask region bytes that differ between two runs of one "
                 "path (clocks, counters, pointers), list them and search "
                 "again; without it they stop the check (exit 3)");
}

int run_check(const CheckOptions &options) {
  JsonOutput json_output(options.json);
  try {
    return check(options, json_output);
  } catch (const UserError &error) {
    json_output.write(error_json(error.what()));
    throw;
  }
}

} // namespace cmc::app
