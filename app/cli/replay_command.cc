#include "app/cli/replay_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/path_replay.h"
#include "app/cli/target_setup.h"
#include "app/report/report_reader.h"
#include "app/report/step_report.h"
#include "search/property.h"
#include "tracer/control/target_run.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/syscalls/syscall_trace.h"
#include "util/escape.h"
#include "util/fingerprint.h"
#include "util/unique_fd.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// What a report gives: the steps, the violation it found, the target.
struct Plan {
  std::vector<Step> steps;
  std::string expected; // the report's violation, or ""
  TargetOptions target;
  // The command and the program's hash (program_hash()) the report found
  // its violation with; the hash "" when the report does not say.
  std::vector<std::string> found_with;
  std::string found_hash;
};

// The text of the report at path: a regular file of at most 64 MiB.
std::string read_report(const std::string &path) {
  const auto fail = [&](const std::string &why) {
    cannot_check(fmt::format("cannot read the report {}: {}", path, why));
  };
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    fail(std::strerror(errno));
  constexpr std::size_t kMostBytes = 64 << 20;
  std::string text;
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t got = read(fd.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      fail(std::strerror(errno)); // EISDIR for a directory
    if (got == 0)
      return text;
    text.append(buffer.data(), static_cast<std::size_t>(got));
    if (text.size() > kMostBytes)
      fail("larger than 64 MiB, not a cmc check --json report");
  }
}

// The report's target options where the command line gave none.
void merge_target(TargetOptions &target, const TargetOptions &report) {
  if (target.command.empty())
    target.command = report.command;
  if (target.regions.empty())
    target.regions = report.regions;
  if (target.clients.empty())
    target.clients = report.clients;
  if (target.invariant == "none")
    target.invariant = report.invariant;
  if (target.seed == 0)
    target.seed = report.seed;
  if (target.forbid_response.empty())
    target.forbid_response = report.forbid_response;
  if (target.properties.empty())
    target.properties = report.properties;
  if (!target.port)
    target.port = report.port;
  target.aslr = target.aslr || report.aslr;
  target.crash = target.crash || report.crash;
  if (target.writable.empty())
    target.writable = report.writable;
  if (target.tick.empty())
    target.tick = report.tick;
}

// Each step's client is one of the clients the replay starts (--client
// given overrides the report's).
void check_step_clients(const Plan &plan) {
  const std::vector<std::string> &clients = plan.target.clients;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    const bool known =
        std::find(clients.begin(), clients.end(), step.client) != clients.end();
    if (step.kind != Step::Kind::kTick && step.kind != Step::Kind::kCrash &&
        !clients.empty() && !known)
      usage(fmt::format(
          "the report's step {} is by {}, not by one of the clients {}", i + 1,
          step.client.empty() ? "no client"
                              : "client '" + encode_escapes(step.client) + "'",
          fmt::join(clients, ", ")));
  }
}

Plan report_plan(const ReplayOptions &options) {
  auto report = parse_report(read_report(options.from));
  if (!report)
    cannot_check(fmt::format("{}: {}", options.from, report.error().message));
  Plan plan;
  plan.steps = std::move(report->steps);
  plan.expected = std::move(report->expected);
  plan.target = options.target;
  merge_target(plan.target, report->target);
  plan.found_with = report->target.command;
  plan.found_hash = report->program_hash;
  check_step_clients(plan);
  return plan;
}

// A --steps word: TEXT, "tick", "crash", with clients "NAME:TEXT" or
// "NAME:disconnect".
Step step_from_text(const std::string &text, const TargetOptions &target) {
  if (text == "crash" && target.crash)
    return {Step::Kind::kCrash, "", ""};
  if (text == "tick") {
    if (target.tick.empty())
      usage("a tick step needs --tick DURATION");
    return {Step::Kind::kTick, "", ""};
  }
  if (target.clients.empty())
    return {Step::Kind::kSend, "", decode_messages({text}).front()};
  const auto colon = text.find(':');
  const std::string client = text.substr(0, colon);
  if (colon == std::string::npos ||
      std::find(target.clients.begin(), target.clients.end(), client) ==
          target.clients.end())
    usage(fmt::format("with --client, a step is NAME:TEXT or "
                      "NAME:disconnect, NAME a client: '{}'",
                      text));
  const std::string rest = text.substr(colon + 1);
  if (rest == "disconnect")
    return {Step::Kind::kDisconnect, client, ""};
  return {Step::Kind::kSend, client, decode_messages({rest}).front()};
}

// A --preempt word, "STEP:POINT[,POINT...]", set on its step of steps.
void preempt_step(const std::string &text, std::vector<Step> &steps) {
  const auto colon = text.find(':');
  std::size_t step = 0;
  const std::string number = text.substr(0, colon);
  const auto [end, failed] =
      std::from_chars(number.data(), number.data() + number.size(), step);
  if (colon == std::string::npos || failed != std::errc() ||
      end != number.data() + number.size() || step == 0 || step > steps.size())
    usage(fmt::format("--preempt takes STEP:POINT[,POINT...], STEP from 1 to "
                      "{} (a step of --steps): '{}'",
                      steps.size(), encode_escapes(text)));
  auto points = parse_preemption_points(text.substr(colon + 1));
  if (!points)
    usage(fmt::format("--preempt {}: {}", encode_escapes(text),
                      points.error().message));
  steps[step - 1].preempt_at = std::move(*points);
}

Plan plan_of(const ReplayOptions &options) {
  if (options.from.empty() == options.steps.empty())
    usage("give the steps to replay: --from REPORT.json or --steps");
  if (!options.from.empty() && !options.preempt.empty())
    usage("--preempt goes with --steps; a report names its own preemptions");
  if (!options.from.empty())
    return report_plan(options);
  Plan plan;
  plan.target = options.target;
  for (const std::string &text : options.steps)
    plan.steps.push_back(step_from_text(text, options.target));
  for (const std::string &text : options.preempt)
    preempt_step(text, plan.steps);
  return plan;
}

// The alphabet of the steps (their clients, messages, disconnects), and
// each step's action in it.
std::vector<executor::PathStep> actions_of(const std::vector<Step> &steps,
                                           tracer::TargetSpec &spec) {
  spec.messages.clear();
  spec.client_of.clear();
  for (const Step &step : steps)
    if (step.kind != Step::Kind::kTick)
      (void)action_of(spec, step); // the whole alphabet first
  std::vector<executor::PathStep> actions;
  actions.reserve(steps.size());
  for (const Step &step : steps)
    actions.push_back(action_of(spec, step));
  return actions;
}

} // namespace

void add_replay_options(CLI::App &replay, ReplayOptions &options) {
  add_target_options(replay, options.target);
  replay.add_option("--from", options.from,
                    "Replay the counterexample of this cmc check --json "
                    "report (its target, regions and invariant too)");
  replay.add_option("--steps", options.steps,
                    "Replay these steps instead: message texts (C escapes "
                    "decoded), 'tick' for a tick of --tick, or 'crash' for a "
                    "crash and restart of --crash");
  replay
      .add_option("--preempt", options.preempt,
                  "Switch threads in step STEP (of --steps, from 1) at these "
                  "of its preemption points, as a check with --preemptions "
                  "found: its system calls at which the thread running "
                  "stopped while another could run, counted from 1")
      ->type_name("STEP:POINT[,POINT...]");
  replay.add_flag("--backtrace", options.backtrace,
                  "Show the target's user stack at each system call "
                  "(libunwind, symbols and lines from libdwfl)");
  replay.add_flag("--startup", options.startup,
                  "Also list the system calls made before the first step");
  replay
      .add_option("--json", options.json,
                  "Write every step's system calls, replies and region "
                  "changes as JSON to FILE (- for stdout, the text then on "
                  "stderr; docs/report-format.md)")
      ->type_name("FILE")
      ->check(json_file());
  add_trace_options(replay, options.trace);
}

namespace {

// Prints each step as it goes: the system calls the output shows, what
// the target waits in, the replies and the region changes.
class PrintingWatcher final : public ReplayWatcher {
public:
  PrintingWatcher(const tracer::TargetSpec &spec, const Plan &plan,
                  const ReplayOptions &options, const TraceOutput &out)
      : spec_(spec), plan_(plan), options_(options), out_(out) {}

  void started(const std::vector<tracer::TracedCall> &calls) override {
    fmt::print(
        out_.text(),
        "start: {} system calls until the target waited for a client{}\n",
        calls.size(), options_.startup ? ":" : " (--startup lists them)");
    if (options_.startup)
      print_calls(calls, "  ", out_);
  }

  void stepping(std::size_t step) override {
    fmt::print(out_.text(), "step {}: {}\n", step + 1,
               step_text(plan_.steps.at(step), plan_.target.tick));
  }

  void stepped(const StepOutcome &outcome) override {
    print_calls(outcome.calls, "  ", out_);
    if (outcome.waiting_in && out_.shows(*outcome.waiting_in))
      fmt::print(out_.text(), "  waiting in: {}\n",
                 outcome.waiting_in->parts.text());
    print_effects(out_.text(), spec_, outcome.effects, true);
    print_responses(out_.text(), spec_, outcome.received);
    if (outcome.fault)
      print_backtrace(out_.text(), outcome.fault->backtrace, 8);
    else if (whole_process(spec_))
      print_state_changes(out_.text(), outcome.state_changes);
    else
      print_changes(out_.text(), outcome.changes);
  }

private:
  const tracer::TargetSpec &spec_;
  const Plan &plan_;
  const ReplayOptions &options_;
  const TraceOutput &out_;
};

// The report's violation did not show: with another build or command the
// bug is gone (exit 0); with the very build that showed it, the target
// does not behave the same under cmc (exit 3).
void not_reproduced(std::FILE *out, const Plan &plan,
                    const std::string &program) {
  if (plan.found_hash.empty()) {
    fmt::print(out,
               "does not reproduce: {}; the report does not say which build "
               "showed it (a fixed build, or a target that is not "
               "deterministic under cmc's control)\n",
               plan.expected);
    return;
  }
  if (plan.found_with != plan.target.command ||
      plan.found_hash != program_hash(program)) {
    fmt::print(out,
               "does not reproduce: {}; the report found it with {} "
               "(another build or command)\n",
               plan.expected,
               plan.found_with.empty() ? "?" : plan.found_with.front());
    return;
  }
  cannot_check(fmt::format("the violation did not reproduce with the build "
                           "that showed it ({}): the target is not "
                           "deterministic under cmc's control",
                           plan.expected));
}

} // namespace

int run_replay(const ReplayOptions &options) {
  JsonOutput json(options.json);
  const TraceOutput out(options.trace, json.text_stream());
  const Plan plan = plan_of(options);
  auto spec = target_spec(plan.target);
  const auto actions = actions_of(plan.steps, *spec);
  locate_program(*spec, plan.target);
  const auto property =
      make_check_property(plan.target, spec, layout_of(spec->regions));
  tracer::SyscallTrace trace(options.backtrace, out.format());
  PrintingWatcher watcher(*spec, plan, options, out);
  const PathReplay replay =
      replay_path(*spec, actions, plan.target.tick, *property, trace, watcher);
  const bool violated = !replay.violation.empty();
  json.write(replay_report_json(replay, plan.expected));
  if (violated) {
    fmt::print(out.text(), "violated: {} (at step {} of {})\n",
               replay.violation, replay.violation_step, actions.size());
    return static_cast<int>(ExitCode::kViolation);
  }
  fmt::print(out.text(), "no violation in {} steps\n", actions.size());
  if (!plan.expected.empty())
    not_reproduced(out.text(), plan, spec->served_program());
  return static_cast<int>(ExitCode::kHolds);
}

} // namespace cmc::app
