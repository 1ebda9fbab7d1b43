#include "app/cli/path_replay.h"

#include <optional>
#include <span>

#include <fmt/format.h>

#include "app/cli/target_setup.h"
#include "tracer/sandbox/network_namespace.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// The target started with every system call stopping; the calls until it
// waits for a client go to the watcher.
tracer::TargetRun start_observed(const tracer::TargetSpec &spec,
                                 const tracer::NetworkNamespace &netns,
                                 tracer::SyscallTrace &trace,
                                 ReplayWatcher &watcher, PathReplay &replay) {
  tracer::LaunchSpec launch = spec.launch;
  launch.observe = true;
  launch.netns = netns.fd();
  bool located = false;
  auto run = tracer::TargetRun::start(spec, launch, located, &trace);
  if (!run)
    cannot_check(run.error().message);
  const auto calls = trace.take();
  watcher.started(calls);
  replay.startup_syscalls = calls_json(calls);
  return std::move(*run);
}

// Every state and what every client received so far, for properties over
// the whole path.
struct Seen {
  std::vector<std::vector<std::byte>> states;
  std::vector<std::vector<std::string>> received;
  // With a whole-process state: the last state, by name.
  std::optional<ShownState> shown;
  tracer::ProcessCapture capture;
};

// Reads the whole process into seen.shown (when it is the state); the
// lines of what changed since the state before.
std::vector<std::string> read_shown(const tracer::TargetSpec &spec,
                                    const tracer::TargetRun &run, Seen &seen) {
  if (!whole_process(spec))
    return {};
  auto now = read_named_state(spec, run, seen.capture);
  if (!now)
    cannot_check(now.error().message);
  std::vector<std::string> lines;
  if (seen.shown)
    lines = state_changes(*seen.shown, *now);
  seen.shown = std::move(*now);
  return lines;
}

// A line of state_changes as valid JSON text: the bytes of a file name or
// a symbol that are not ASCII written \xHH.
std::string ascii(const std::string &line) {
  std::string text;
  for (const char c : line)
    if (static_cast<unsigned char>(c) < 0x80)
      text += c;
    else
      text += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  return text;
}

nlohmann::json outcome_json(const tracer::TargetSpec &spec, const Step &step,
                            const std::string &tick,
                            const StepOutcome &outcome) {
  nlohmann::json json = step_json(step, tick);
  json["syscalls"] = calls_json(outcome.calls);
  json["waiting_in"] = outcome.waiting_in
                           ? nlohmann::json(outcome.waiting_in->parts.text())
                           : nlohmann::json(nullptr);
  add_effects_json(json, outcome.effects);
  json["replies"] = replies_json(spec, outcome.received);
  json["changes"] = changes_json(outcome.changes);
  json["state_changes"] = nlohmann::json::array();
  for (const std::string &line : outcome.state_changes)
    json["state_changes"].push_back(ascii(line));
  return json;
}

// Takes the step of action; reads the state after it unless the target
// died by it.
StepOutcome take_step(tracer::TargetRun &run, tracer::SyscallTrace &trace,
                      const tracer::TargetSpec &spec,
                      const executor::PathStep &action, std::size_t i,
                      Seen &seen) {
  StepOutcome outcome;
  outcome.step = i;
  auto fault = run.step(action);
  if (!fault)
    cannot_check(fault.error().message);
  outcome.calls = trace.take();
  if (!*fault)
    outcome.waiting_in = trace.pending(run.tracee());
  outcome.received = run.drain();
  seen.received.push_back(outcome.received);
  outcome.effects = run.effects();
  if (*fault) {
    (*fault)->step = i;
    outcome.fault = std::move(**fault);
    return outcome;
  }
  auto after = run.read_state();
  if (!after)
    cannot_check(after.error().message);
  outcome.changes =
      changes_of(layout_of(spec.regions), seen.states.back(), *after);
  seen.states.push_back(std::move(*after));
  outcome.state_changes = read_shown(spec, run, seen);
  return outcome;
}

} // namespace

PathReplay replay_path(const tracer::TargetSpec &spec,
                       const std::vector<executor::PathStep> &actions,
                       const std::string &tick,
                       const search::Property &property,
                       tracer::SyscallTrace &trace, ReplayWatcher &watcher) {
  auto netns = tracer::NetworkNamespace::create();
  if (!netns)
    cannot_check(netns.error().message);
  PathReplay replay;
  tracer::TargetRun run = start_observed(spec, *netns, trace, watcher, replay);
  Seen seen;
  if (auto initial = run.read_state())
    seen.states.push_back(std::move(*initial));
  else
    cannot_check(initial.error().message);
  (void)read_shown(spec, run, seen);
  for (std::size_t i = 0; i < actions.size(); ++i) {
    watcher.stepping(i);
    const StepOutcome outcome =
        take_step(run, trace, spec, actions[i], i, seen);
    watcher.stepped(outcome);
    replay.steps.push_back(
        outcome_json(spec, step_of(spec, actions[i]), tick, outcome));
    std::optional<std::string> violation;
    if (outcome.fault) {
      violation = outcome.fault->violation();
    } else {
      const std::span<const executor::PathStep> path(actions.data(), i + 1);
      violation = property.check_last_step({path, seen.states, seen.received});
    }
    if (violation) {
      replay.violation = *violation;
      replay.violation_step = i + 1;
      break;
    }
  }
  return replay;
}

nlohmann::json replay_report_json(const PathReplay &replay,
                                  const std::string &expected) {
  const bool violated = !replay.violation.empty();
  const auto bytes_or_null = [](const std::string &text) {
    return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
  };
  nlohmann::json report = report_header();
  report.update(nlohmann::json{
      {"verdict", violated ? "violated" : "holds"},
      {"violation", bytes_or_null(replay.violation)},
      {"violation_step", violated ? nlohmann::json(replay.violation_step)
                                  : nlohmann::json(nullptr)},
      {"expected_violation", bytes_or_null(expected)},
      {"startup_syscalls", replay.startup_syscalls},
      {"steps", replay.steps}});
  return report;
}

} // namespace cmc::app
