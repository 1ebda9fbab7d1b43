#include "app/cli/check_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <limits>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/path_replay.h"
#include "app/cli/target_setup.h"
#include "app/render/check_page.h"
#include "app/render/html_report.h"
#include "app/render/state_graph.h"
#include "app/report/report.h"
#include "app/report/target_options.h"
#include "app/report/verdict_lines.h"
#include "decoder/elf_file.h"
#include "decoder/region.h"
#include "search/breadth_first.h"
#include "tracer/backend/process_executor.h"
#include "tracer/process/watchdog.h"
#include "util/duration.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// What a state is: --dedup, by default the regions when there are some,
// else the whole process.
executor::StateKind state_kind(const CheckOptions &options) {
  const bool regions = !options.target.regions.empty();
  const std::string &dedup =
      options.dedup.empty() ? (regions ? "regions" : "process") : options.dedup;
  if (dedup == "raw")
    return executor::StateKind::kRaw;
  if (dedup == "process")
    return executor::StateKind::kProcess;
  if (dedup == "path") {
    if (!options.max_depth)
      usage("--dedup path needs --max-depth: with no merges the tree of "
            "paths has no end");
    return executor::StateKind::kPath;
  }
  if (!regions)
    usage("--dedup regions needs a --region: the regions are then the state");
  return executor::StateKind::kRegions;
}

// The bytes of saved states each worker keeps: --snapshot-memory, by
// default an eighth of the machine's memory shared by one worker per CPU
// (at most 1 GiB each).
std::size_t snapshot_memory(const CheckOptions &options) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (options.snapshot_memory)
    return *options.snapshot_memory * kMiB;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const std::size_t memory = pages > 0 && page_size > 0
                                 ? static_cast<std::size_t>(pages) *
                                       static_cast<std::size_t>(page_size)
                                 : std::size_t{2048} * kMiB;
  const unsigned cpus = std::max(1U, std::thread::hardware_concurrency());
  return std::min(memory / 8 / cpus, 1024 * kMiB);
}

} // namespace

std::shared_ptr<const tracer::TargetSpec>
check_spec(const CheckOptions &options) {
  if (options.target.messages.empty())
    usage("give at least one --message");
  if (options.target.regions.empty() && options.target.invariant != "none")
    usage(fmt::format("--invariant {} needs a --region: it is a property of "
                      "region bytes",
                      options.target.invariant));
  if (options.target.tick.empty() && options.max_ticks)
    usage("--max-ticks needs --tick");
  const executor::StateKind state = state_kind(options);
  if (options.strict && state != executor::StateKind::kRegions)
    usage("--strict needs --dedup regions: only the region abstraction "
          "merges states that differ elsewhere");
  auto spec = target_spec(options.target);
  if (spec->tick &&
      options.max_ticks.value_or(1) >
          static_cast<std::size_t>(kLongestDuration / *spec->tick))
    usage(fmt::format("--max-ticks {} of --tick {} add up to more than 100 "
                      "years of virtual time",
                      *options.max_ticks, options.target.tick));
  spec->state = state;
  // A preemption point is any system call (replay and explore stop at
  // every one too, so that they count the same points).
  spec->launch.observe = options.preemptions != 0;
  // Every merge of regions is audited against the whole process.
  spec->audit = state == executor::StateKind::kRegions;
  // A restored run checked against replays that agree with each other
  // but not with it, where the bytes were volatile all along, now and
  // then stopped such a check (Snapshots tests, 2 of 14 runs on a loaded
  // machine), cause not found yet: --mask-volatile replays.
  if (options.mask_volatile && options.mode == "snapshot")
    usage("--mask-volatile finds volatile bytes by replaying: it needs "
          "--mode replay (its default)");
  // A snapshot does not keep what of the files is durable: a crash is
  // replayed.
  if (options.target.crash && options.mode == "snapshot")
    usage("--crash needs --mode replay (its default with --crash): a "
          "snapshot does not keep what of the files is durable");
  spec->snapshots = options.mode.empty()
                        ? !options.mask_volatile && !options.target.crash
                        : options.mode == "snapshot";
  if (options.snapshot_memory && !spec->snapshots)
    usage("--snapshot-memory needs --mode snapshot");
  spec->snapshot_memory = snapshot_memory(options);
  locate_program(*spec, options.target);
  return spec;
}

unsigned job_count(const CheckOptions &options) {
  const unsigned cpus = std::max(1U, std::thread::hardware_concurrency());
  if (!options.jobs)
    return cpus;
  if (*options.jobs == 0)
    usage("-j 0: give at least 1 worker (default: one per CPU)");
  unsigned most = 4 * cpus;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
    most =
        static_cast<unsigned>(std::clamp<rlim_t>(files.rlim_cur / 32, 1, most));
  if (*options.jobs <= most)
    return *options.jobs;
  fmt::print(stderr,
             "cmc: -j {} is more workers than this machine runs at once; "
             "using {} (at most 4 per CPU and 1 per 32 open files of "
             "RLIMIT_NOFILE)\n",
             *options.jobs, most);
  return most;
}

search::Options search_options(const CheckOptions &options,
                               const tracer::TargetSpec &spec) {
  search::Options search;
  if (options.max_depth)
    search.max_depth = *options.max_depth;
  if (options.max_states)
    search.max_states = *options.max_states;
  search.jobs = job_count(options);
  search.progress = !options.quiet;
  if (spec.tick) {
    search.tick = spec.tick_action();
    search.max_ticks = options.max_ticks.value_or(1);
  }
  search.once_actions = options.once ? spec.messages.size() : 0;
  search.preemptions = options.preemptions;
  search.state = spec.state;
  search.audit = spec.audit;
  search.mask_volatile = options.mask_volatile;
  search.graph = !options.dot.empty() || !options.html.empty();
  search.stop_requested = [] {
    return tracer::Watchdog::instance().interrupted();
  };
  return search;
}

namespace {

// The settings the search runs with, on stderr before it starts, as TLC's
// start banner: "cmc: breadth-first search of ./kv, 2 actions: 2
// workers, --mode replay, state regions (cmc_state), depth unbounded,
// states unbounded, --seed 0, started 2026-12-06T05:54:00Z". The start
// is in UTC, so two machines' logs compare.
void print_banner(const CheckOptions &options, const tracer::TargetSpec &spec,
                  const search::Options &search) {
  std::string state(state_name(spec.state));
  if (spec.state == executor::StateKind::kRegions) {
    std::vector<std::string> regions;
    for (const decoder::Region &region : spec.regions)
      regions.push_back(region.name);
    state += fmt::format(" ({}; merges audited against the whole process)",
                         fmt::join(regions, ", "));
  }
  const auto bound = [](const std::optional<std::size_t> &limit) {
    return limit ? fmt::format("at most {}", *limit) : "unbounded";
  };
  fmt::print(
      stderr,
      "cmc: breadth-first search of {}, {} action{}: {} worker{}, "
      "--mode {}, state {}, depth {}, states {}{}{}, --seed {}, started "
      "{:%Y-%m-%dT%H:%M:%SZ}\n",
      program_name(spec), spec.alphabet_size(),
      spec.alphabet_size() == 1 ? "" : "s", search.jobs,
      search.jobs == 1 ? "" : "s", spec.snapshots ? "snapshot" : "replay",
      state, bound(options.max_depth), bound(options.max_states),
      spec.tick ? fmt::format(", ticks at most {}", search.max_ticks) : "",
      search.preemptions != 0
          ? fmt::format(", preemptions at most {} a step", search.preemptions)
          : "",
      spec.seed, fmt::gmtime(std::time(nullptr)));
}

} // namespace

StepNames step_names(const CheckOptions &options,
                     const std::shared_ptr<const tracer::TargetSpec> &spec,
                     unsigned jobs) {
  StepNames names{spec, spec->tick ? format_duration(*spec->tick) : "",
                  spec->tick ? options.max_ticks.value_or(1) : 0, spec->seed};
  names.once = options.once;
  names.preemptions = options.preemptions;
  names.max_depth = options.max_depth;
  names.max_states = options.max_states;
  names.jobs = jobs;
  names.no_property = options.target.invariant == "none" &&
                      options.target.forbid_response.empty() &&
                      options.target.properties.empty();
  names.plugins = !options.target.properties.empty();
  return names;
}

void print_replay(std::FILE *out, const CheckOptions &options,
                  const search::Report &report, const StepNames &names) {
  std::vector<Step> steps;
  for (const executor::PathStep &step : report.counterexample)
    steps.push_back(step_of(*names.spec, step));
  fmt::print(out, "replay it: {}\n",
             replay_command_line(options.target, steps));
  if (!options.json.empty() && options.json != "-")
    fmt::print(out, "       or: cmc replay --from {}\n", options.json);
}

namespace {

// The replay for the page prints nothing: the check's output is its own.
class QuietWatcher final : public ReplayWatcher {
public:
  void started(const std::vector<tracer::TracedCall> & /*calls*/) override {}
  void stepping(std::size_t /*step*/) override {}
  void stepped(const StepOutcome & /*outcome*/) override {}
};

// The counterexample of json's check replayed once, as `cmc replay --json`
// reports it, for the --html page's chart; null when there is none (an
// interrupted search keeps its counterexample, but has no verdict) or the
// replay fails.
nlohmann::json replayed_counterexample(const nlohmann::json &json,
                                       const search::Report &report,
                                       const StepNames &names,
                                       const search::Property &property) {
  if (json.at("verdict") != "violated")
    return nullptr;
  tracer::SyscallTrace trace(false);
  QuietWatcher watcher;
  try {
    return replay_report_json(replay_path(*names.spec, report.counterexample,
                                          names.tick, property, trace, watcher),
                              report.violation);
  } catch (const UserError &error) {
    fmt::print(stderr,
               "cmc: the --html page has no chart of the counterexample: "
               "its replay failed: {}\n",
               error.what());
    return nullptr;
  }
}

int check(const CheckOptions &options, JsonOutput &json_output,
          OutputFile &page, OutputFile &dot) {
  const auto spec = check_spec(options);
  const auto layout = layout_of(spec->regions);
  const auto property = make_check_property(options.target, spec, layout);
  const search::ExecutorFactory factory = [spec] {
    tracer::pin_this_thread();
    return std::make_unique<tracer::ProcessExecutor>(spec);
  };
  const search::Options search = search_options(options, *spec);
  if (search.progress)
    print_banner(options, *spec, search);
  auto report = search::breadth_first(factory, spec->alphabet_size(), *property,
                                      layout, search);
  if (!report)
    cannot_check(report.error().message);
  const StepNames names = step_names(options, spec, search.jobs);
  auto json = report_json(*report, names);
  json["replay"] = replay_json(options.target, spec->served_program());
  // The verdict first: a JSON file that cannot be written does not hide it.
  std::FILE *out = json_output.text_stream();
  print_report(out, *report, names);
  if (report->verdict == search::Verdict::kViolated)
    print_replay(out, options, *report, names);
  const std::string lossy = abstraction_caveat(*report, names);
  const bool refused = options.strict && !lossy.empty() &&
                       report->verdict == search::Verdict::kHolds;
  if (refused) {
    json["verdict"] = "error";
    json["error"] = lossy;
  }
  json_output.write(json);
  if (dot.wanted())
    dot.write(state_graph_dot(*report, names, layout,
                              std::numeric_limits<std::size_t>::max()));
  // Only with --html: the page replays a counterexample and draws the graph.
  if (page.wanted())
    page.write(
        check_page(json, *report, names, layout,
                   replayed_counterexample(json, *report, names, *property)));
  if (refused)
    fmt::print(stderr, "cmc: {}; --strict makes that an error\n", lossy);
  if (report->interrupted || refused)
    return static_cast<int>(ExitCode::kCannotCheck);
  return report->verdict == search::Verdict::kViolated
             ? static_cast<int>(ExitCode::kViolation)
             : static_cast<int>(ExitCode::kHolds);
}

// How far the search goes and how many workers run it.
void add_bound_options(CLI::App &check, CheckOptions &options) {
  check
      .add_option("--max-depth", options.max_depth,
                  "Explore paths of at most N steps")
      ->type_name("N");
  check
      .add_option("--max-states", options.max_states,
                  "Stop after N distinct states")
      ->type_name("N");
  check
      .add_option("-j,--jobs", options.jobs,
                  "N worker threads (default: all CPUs; at most 4 per CPU)")
      ->type_name("N")
      ->check(whole_number());
}

// What the check writes besides its text: the JSON report, the graph, the
// page; and the progress lines it leaves out.
void add_output_options(CLI::App &check, CheckOptions &options) {
  check
      .add_option("--json", options.json,
                  "Write the JSON report to FILE (- for stdout; "
                  "docs/report-format.md)")
      ->type_name("FILE")
      ->check(json_file());
  check
      .add_option("--dot", options.dot,
                  "Write every explored state and transition to FILE as a "
                  "Graphviz DOT graph, the counterexample in red")
      ->type_name("FILE")
      ->check(output_file(false));
  check
      .add_option("--html", options.html,
                  "Write the report as one self-contained HTML page to FILE: "
                  "the verdict, settings, counts, coverage, sources of time "
                  "and randomness, a counterexample's message sequence "
                  "chart, and the state graph of --dot")
      ->type_name("FILE")
      ->check(output_file(false));
  check.add_flag("-q,--quiet", options.quiet, "No progress lines");
}

// Which paths are explored: the ticks on one, each message once.
void add_path_options(CLI::App &check, CheckOptions &options) {
  check
      .add_option("--max-ticks", options.max_ticks,
                  "With --tick: at most N ticks per path (default 1)")
      ->type_name("N")
      ->check(CLI::PositiveNumber.description(""));
  check
      .add_option("--preemptions", options.preemptions,
                  "Inside each step, up to N switches away from a thread "
                  "that could go on, at its system calls, each order a path "
                  "of its own (preemption bounding, as CHESS; default 0: "
                  "threads switch only where they wait, yield or end; at "
                  "most 4)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{0}, executor::kMaxPreemptions)
                  .description(""));
  check.add_flag("--once", options.once,
                 "Each message at most once per path (the messages taken "
                 "are then part of the state)");
}

// What a state is and how the search reaches it.
void add_state_options(CLI::App &check, CheckOptions &options) {
  check.add_flag("--mask-volatile", options.mask_volatile,
                 "Mask state bytes that differ between two runs of one "
                 "path (clocks, counters, pointers), list them and search "
                 "again; without it they stop the check (exit 3)");
  check
      .add_option("--dedup", options.dedup,
                  "What a state is: process (the whole process, heap "
                  "canonical), raw (the whole process, every byte as read), "
                  "regions (the --region bytes; every merge audited "
                  "against the whole process) or path (each path its own "
                  "state, nothing merges: for a target whose state differs "
                  "between runs; needs --max-depth). Default: regions with "
                  "--region, else process")
      ->type_name("KIND")
      ->check(CLI::IsMember({"process", "raw", "regions", "path"}));
  check
      .add_option("--mode", options.mode,
                  "How each transition reaches its state: snapshot (the "
                  "default: each worker keeps its target alive and the "
                  "states it saved, restores the longest saved prefix in "
                  "place and replays only where a state cannot be restored "
                  "faithfully) or replay (a fresh target replays the path; "
                  "the default with --mask-volatile)")
      ->type_name("MODE")
      ->check(CLI::IsMember({"replay", "snapshot"}));
  check
      .add_option("--snapshot-memory", options.snapshot_memory,
                  "With --mode snapshot: MiB of saved states per worker "
                  "(default: an eighth of the memory over the CPUs, at most "
                  "1024)")
      ->type_name("MIB")
      ->check(CLI::PositiveNumber.description(""));
  check.add_flag("--strict", options.strict,
                 "With --dedup regions: a merge of two states whose whole "
                 "processes differ is an error (exit 3), not a caveat");
}

} // namespace

void add_check_options(CLI::App &check, CheckOptions &options) {
  add_target_options(check, options.target);
  check.get_option("--message")->required();
  check.get_option("--region")
      ->description("State to read after every step (repeatable): SYMBOL, "
                    "SYMBOL:LEN or SYMBOL+OFF:LEN, from .symtab or .dynsym. "
                    "With any, the regions are the state (--dedup regions), "
                    "every merge audited against the whole process");
  add_bound_options(check, options);
  add_output_options(check, options);
  add_path_options(check, options);
  add_state_options(check, options);
}

int run_check(const CheckOptions &options) {
  JsonOutput json_output(options.json);
  OutputFile page("--html", "the HTML page", options.html);
  OutputFile dot("--dot", "the state graph", options.dot);
  try {
    return check(options, json_output, page, dot);
  } catch (const UserError &error) {
    const nlohmann::json json = error_json(error.what());
    json_output.write(json);
    if (page.wanted())
      page.write(html_report(json, nullptr, ""));
    throw;
  }
}

} // namespace cmc::app
