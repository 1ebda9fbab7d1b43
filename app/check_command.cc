#include "app/check_command.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

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

[[noreturn]] void cannot_check(const std::string &message) {
  throw UserError(ExitCode::kCannotCheck, message);
}

[[noreturn]] void usage(const std::string &message) {
  throw UserError(ExitCode::kUsage, message);
}

std::vector<decoder::Region> resolve_regions(const CheckOptions &options,
                                             const decoder::ElfFile &elf) {
  if (options.regions.empty())
    usage("give at least one --region: the state cmc reads from the target");
  std::vector<decoder::Region> regions;
  for (const std::string &text : options.regions) {
    auto spec = decoder::parse_region_spec(text);
    if (!spec)
      usage(spec.error().message);
    auto region = decoder::resolve_region(*spec, elf);
    if (!region)
      cannot_check(region.error().message);
    regions.push_back(std::move(*region));
  }
  return regions;
}

std::shared_ptr<const tracer::TargetSpec>
target_spec(const CheckOptions &options) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->launch.program = resolve_program(options.command.at(0));
  spec->launch.argv = options.command;
  spec->launch.aslr = options.aslr;
  spec->launch.show_output = options.show_output;
  auto elf = decoder::ElfFile::open(spec->launch.program);
  if (!elf)
    cannot_check(elf.error().message);
  spec->regions = resolve_regions(options, *elf);
  spec->load_base = elf->load_base();
  spec->entry = elf->entry();
  spec->messages = decode_messages(options.messages);
  if (spec->messages.empty())
    usage("give at least one --message");
  spec->seed = options.seed;
  if (!options.tick.empty()) {
    auto tick = parse_duration(options.tick);
    if (!tick)
      usage("bad --tick " + tick.error().message);
    spec->tick = *tick;
  } else if (options.max_ticks) {
    usage("--max-ticks needs --tick");
  }
  spec->port = options.port;
  spec->step_timeout =
      std::chrono::milliseconds(std::llround(options.step_timeout_s * 1000));
  return spec;
}

std::vector<search::RegionLayout>
layout_of(const std::vector<decoder::Region> &regions) {
  std::vector<search::RegionLayout> layout;
  std::size_t offset = 0;
  for (const decoder::Region &region : regions) {
    layout.push_back({region.name, offset, region.length});
    offset += region.length;
  }
  return layout;
}

void write_json(const std::string &destination, const nlohmann::json &json) {
  if (destination.empty())
    return;
  if (destination == "-") {
    std::cout << json.dump(2) << '\n';
    return;
  }
  std::ofstream file(destination);
  file << json.dump(2) << '\n';
  if (!file)
    cannot_check(
        fmt::format("cannot write the JSON report to {}", destination));
}

search::Options search_options(const CheckOptions &options) {
  search::Options search;
  if (options.max_depth)
    search.max_depth = *options.max_depth;
  if (options.max_states)
    search.max_states = *options.max_states;
  search.jobs = options.jobs != 0
                    ? options.jobs
                    : std::max(1U, std::thread::hardware_concurrency());
  search.progress = !options.quiet;
  if (!options.tick.empty()) {
    search.tick = static_cast<tracer::ActionId>(options.messages.size());
    search.max_ticks = options.max_ticks.value_or(1);
  }
  search.stop_requested = [] {
    return tracer::Watchdog::instance().interrupted();
  };
  return search;
}

int check(const CheckOptions &options) {
  const auto spec = target_spec(options);
  const auto layout = layout_of(spec->regions);
  const auto property = search::make_property(options.invariant, layout);
  const search::ExecutorFactory factory = [spec] {
    tracer::pin_this_thread();
    return std::make_unique<tracer::ProcessExecutor>(spec);
  };
  const std::size_t alphabet = spec->messages.size() + (spec->tick ? 1 : 0);
  auto report = search::breadth_first(factory, alphabet, *property, layout,
                                      search_options(options));
  if (!report)
    cannot_check(report.error().message);
  const StepNames names{
      spec->messages, spec->tick ? format_duration(*spec->tick) : "",
      spec->tick ? options.max_ticks.value_or(1) : 0, spec->seed};
  write_json(options.json, report_json(*report, names));
  print_report(options.json == "-" ? stderr : stdout, *report, names);
  if (report->interrupted)
    return static_cast<int>(ExitCode::kCannotCheck);
  return report->verdict == search::Verdict::kViolated
             ? static_cast<int>(ExitCode::kViolation)
             : static_cast<int>(ExitCode::kHolds);
}

} // namespace

void add_check_options(CLI::App &check, CheckOptions &options) {
  check
      .add_option("-m,--message", options.messages,
                  "One client message (repeatable); C escapes \\n \\r \\t "
                  "\\\\ \\xHH are decoded. Tried in the order given.")
      ->required();
  check
      .add_option("--region", options.regions,
                  "State to read after every step (repeatable): SYMBOL, "
                  "SYMBOL:LEN or SYMBOL+OFF:LEN, from .symtab or .dynsym")
      ->required();
  check
      .add_option("--invariant", options.invariant,
                  "Property checked on every transition: sticky (no "
                  "non-zero byte becomes zero) or none. Crashes, exits and "
                  "hangs during a step are always violations.")
      ->check(CLI::IsMember({"sticky", "none"}));
  check.add_option("--max-depth", options.max_depth,
                   "Explore paths of at most N steps");
  check.add_option("--max-states", options.max_states,
                   "Stop after N distinct states");
  check.add_option("-j,--jobs", options.jobs,
                   "Worker threads (default: all CPUs)");
  check.add_option("--json", options.json,
                   "Write the JSON report to FILE (- for stdout)");
  check.add_flag("--aslr", options.aslr,
                 "Leave the target's address-space randomisation on");
  check.add_option("--port", options.port,
                   "Connect to 127.0.0.1:PORT instead of the address the "
                   "target listens on");
  check
      .add_option("--step-timeout", options.step_timeout_s,
                  "Seconds a step may take before the target counts as "
                  "hung (default 10)")
      ->check(CLI::PositiveNumber);
  check.add_flag("--show-output", options.show_output,
                 "Let the target write to cmc's stdout and stderr");
  check.add_flag("-q,--quiet", options.quiet, "No progress lines");
  check.add_option("--tick", options.tick,
                   "Add the step 'advance the target's virtual clock by "
                   "DURATION' (10s, 250ms, ...) to the alphabet, tried after "
                   "the messages; waits and timers whose deadline it passes "
                   "fire");
  check
      .add_option("--max-ticks", options.max_ticks,
                  "With --tick: at most N ticks per path (default 1)")
      ->check(CLI::PositiveNumber);
  check.add_option("--seed", options.seed,
                   "Seed of getrandom, /dev/urandom and AT_RANDOM (default "
                   "0)");
  check.add_option("command", options.command, "-- PROGRAM [ARGS...]")
      ->required();
}

int run_check(const CheckOptions &options) {
  try {
    return check(options);
  } catch (const UserError &error) {
    write_json(options.json, error_json(error.what()));
    throw;
  }
}

} // namespace cmc::app
