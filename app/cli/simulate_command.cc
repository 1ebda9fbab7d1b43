#include "app/cli/simulate_command.h"

#include <array>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "app/cli/target_setup.h"
#include "app/report/report.h"
#include "app/report/verdict_lines.h"
#include "search/random_walk.h"
#include "tracer/backend/process_executor.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// check's options that a random walk has no use for: it has no bound of
// depth or states but its own, no graph, and neither restarts to mask
// volatile bytes, audits merges nor explores preemptions.
constexpr std::array<const char *, 7> kCheckOnly = {
    "--max-depth",     "--max-states", "--dot",        "--html",
    "--mask-volatile", "--strict",     "--preemptions"};

// What the first line says when no walk found a violation, or the user
// stopped them: never that every state was explored.
std::string walks_line(const SimulateOptions &options,
                       const search::WalkReport &walks) {
  const search::Report &report = walks.report;
  if (report.interrupted)
    return fmt::format("interrupted after {} of {} walks: {} distinct states "
                       "seen so far (no verdict)",
                       walks.walks, options.runs, report.distinct_states);
  return fmt::format("no violation in {} walk{} of up to {} step{} ({} "
                     "distinct states seen); a random search does not cover "
                     "every state",
                     walks.walks, walks.walks == 1 ? "" : "s", options.depth,
                     options.depth == 1 ? "" : "s", report.distinct_states);
}

// "found by walk 7 (--walk-seed 0) at step 12; minimised to 3 steps in
// 40 replays".
std::string found_line(const SimulateOptions &options,
                       const search::WalkReport &walks) {
  return fmt::format("found by walk {} (--walk-seed {}) at step {}; "
                     "minimised to {} step{} in {} replay{}",
                     *walks.violating_walk, options.walk_seed,
                     walks.found.size(), walks.report.counterexample.size(),
                     walks.report.counterexample.size() == 1 ? "" : "s",
                     walks.minimise_runs, walks.minimise_runs == 1 ? "" : "s");
}

nlohmann::json simulation_json(const SimulateOptions &options,
                               const search::WalkReport &walks,
                               const StepNames &names) {
  nlohmann::json found = nullptr;
  if (walks.violating_walk) {
    found = nlohmann::json::array();
    for (const executor::PathStep &step : walks.found)
      found.push_back(step_json(step_of(*names.spec, step), names.tick));
  }
  return {{"runs", options.runs},
          {"depth", options.depth},
          {"walk_seed", options.walk_seed},
          {"walks", walks.walks},
          {"steps", walks.steps},
          {"violating_walk", walks.violating_walk
                                 ? nlohmann::json(*walks.violating_walk)
                                 : nlohmann::json(nullptr)},
          {"found", std::move(found)},
          {"minimise_runs", walks.minimise_runs}};
}

void print_banner(const SimulateOptions &options,
                  const tracer::TargetSpec &spec, unsigned jobs) {
  fmt::print(stderr,
             "cmc: random simulation of {}, {} action{}: {} worker{}, "
             "--mode {}, state {}, {} walk{} of up to {} step{}, "
             "--walk-seed {}, --seed {}, started {:%Y-%m-%dT%H:%M:%SZ}\n",
             program_name(spec), spec.alphabet_size(),
             spec.alphabet_size() == 1 ? "" : "s", jobs, jobs == 1 ? "" : "s",
             spec.snapshots ? "snapshot" : "replay", state_name(spec.state),
             options.runs, options.runs == 1 ? "" : "s", options.depth,
             options.depth == 1 ? "" : "s", options.walk_seed, spec.seed,
             fmt::gmtime(std::time(nullptr)));
}

search::WalkReport walk(const SimulateOptions &options,
                        const std::shared_ptr<const tracer::TargetSpec> &spec,
                        const search::WalkOptions &walks) {
  const auto layout = layout_of(spec->regions);
  const auto property = make_check_property(options.check.target, spec, layout);
  const search::ExecutorFactory factory = [spec] {
    tracer::pin_this_thread();
    return std::make_unique<tracer::ProcessExecutor>(spec);
  };
  if (walks.search.progress)
    print_banner(options, *spec, walks.search.jobs);
  auto result = search::random_walks(factory, spec->alphabet_size(), *property,
                                     layout, walks);
  if (!result)
    cannot_check(result.error().message);
  return std::move(*result);
}

int simulate(const SimulateOptions &options, JsonOutput &json_output) {
  if (options.runs == 0)
    usage("--runs 0: give at least 1 walk");
  if (options.depth == 0)
    usage("--depth 0: give at least 1 step per walk");
  // The walks' depth bounds every path, as --max-depth does check's.
  CheckOptions check = options.check;
  check.max_depth = options.depth;
  const auto spec = check_spec(check);
  search::WalkOptions walks{options.runs, options.depth, options.walk_seed,
                            search_options(check, *spec)};
  const search::WalkReport result = walk(options, spec, walks);
  const search::Report &report = result.report;
  const StepNames names = step_names(check, spec, walks.search.jobs);
  VerdictLines lines = verdict_lines(report, names);
  const bool violated =
      !report.interrupted && report.verdict == search::Verdict::kViolated;
  if (!violated)
    lines.first = {walks_line(options, result)};
  lines.qualified = !violated && !report.interrupted;
  auto json = report_json(report, names);
  json.update(verdict_lines_json(lines));
  json["replay"] = replay_json(check.target, spec->served_program());
  json["simulation"] = simulation_json(options, result, names);
  std::FILE *out = json_output.text_stream();
  print_report(out, report, names, lines, "minimised counterexample");
  if (violated) {
    fmt::print(out, "{}\n", found_line(options, result));
    print_replay(out, check, report, names);
  }
  json_output.write(json);
  if (report.interrupted)
    return static_cast<int>(ExitCode::kCannotCheck);
  return violated ? static_cast<int>(ExitCode::kViolation)
                  : static_cast<int>(ExitCode::kHolds);
}

} // namespace

void add_simulate_options(CLI::App &simulate, SimulateOptions &options) {
  add_check_options(simulate, options.check);
  for (const char *name : kCheckOnly)
    simulate.remove_option(simulate.get_option(name));
  simulate
      .add_option("--runs", options.runs,
                  "Take N random walks (default 100), each from the initial "
                  "state")
      ->type_name("N")
      ->check(whole_number());
  simulate
      .add_option("--depth", options.depth,
                  "Take at most D steps per walk (default 20)")
      ->type_name("D")
      ->check(whole_number());
  simulate
      .add_option("--walk-seed", options.walk_seed,
                  "The walks' own randomness (default 0): walk k takes the "
                  "steps a generator seeded by S and k draws, the same for "
                  "the same S whatever -j. --seed stays the target's "
                  "randomness, as for check")
      ->type_name("S")
      ->check(whole_number());
}

int run_simulate(const SimulateOptions &options) {
  JsonOutput json_output(options.check.json);
  try {
    return simulate(options, json_output);
  } catch (const UserError &error) {
    nlohmann::json json = error_json(error.what());
    json["simulation"] = nullptr;
    json_output.write(json);
    throw;
  }
}

} // namespace cmc::app
