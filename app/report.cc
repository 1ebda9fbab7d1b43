#include "app/report.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/escape.h"
#include "util/fingerprint.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

double per_second(std::size_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

std::string_view via_name(tracer::Via via) {
  switch (via) {
  case tracer::Via::kSyscall:
    return "syscall";
  case tracer::Via::kVdso:
    return "vdso";
  case tracer::Via::kOther:
    return "other";
  }
  return "";
}

// Calls visit(info, via) for every source used, in table order.
template <typename Visit>
void for_each_used(const tracer::Sources &sources, Visit visit) {
  for (std::size_t row = 0;
       row < static_cast<std::size_t>(tracer::Source::kCount); ++row)
    for (const auto via :
         {tracer::Via::kSyscall, tracer::Via::kVdso, tracer::Via::kOther})
      if (sources.used(static_cast<tracer::Source>(row), via))
        visit(tracer::source_info(static_cast<tracer::Source>(row)), via);
}

// The settings that change what a state is: --once, the masked bytes.
void print_state_settings(std::FILE *out, const search::Report &report,
                          const StepNames &names) {
  if (names.once)
    fmt::print(out, "once: each message at most once per path\n");
  if (!report.masked.empty())
    fmt::print(out,
               "masked volatile bytes: {} (they differed between two runs "
               "of one path; the search started again {} time(s))\n",
               fmt::join(report.masked, ", "), report.restarts);
}

std::size_t client_index(tracer::TargetSpec &spec, const std::string &name) {
  if (name.empty())
    return 0;
  const auto known = std::find(spec.clients.begin(), spec.clients.end(), name);
  if (known != spec.clients.end())
    return static_cast<std::size_t>(known - spec.clients.begin());
  spec.clients.push_back(name);
  return spec.clients.size() - 1;
}

} // namespace

Step step_of(const tracer::TargetSpec &spec, tracer::ActionId action) {
  const auto client_name = [&](std::size_t client) {
    return spec.clients.empty() ? std::string() : spec.clients.at(client);
  };
  if (spec.tick && action == spec.tick_action())
    return {Step::Kind::kTick, "", ""};
  if (action >= spec.first_disconnect())
    return {Step::Kind::kDisconnect,
            client_name(action - spec.first_disconnect()), ""};
  return {Step::Kind::kSend, client_name(spec.client_of_message(action)),
          spec.messages.at(action)};
}

tracer::ActionId action_of(tracer::TargetSpec &spec, const Step &step) {
  if (step.kind == Step::Kind::kTick)
    return spec.tick_action();
  const std::size_t client = client_index(spec, step.client);
  if (step.kind == Step::Kind::kDisconnect) {
    spec.disconnect = true;
    return static_cast<tracer::ActionId>(spec.first_disconnect() + client);
  }
  for (std::size_t i = 0; i < spec.messages.size(); ++i)
    if (spec.messages[i] == step.message && spec.client_of_message(i) == client)
      return static_cast<tracer::ActionId>(i);
  spec.messages.push_back(step.message);
  if (!spec.clients.empty())
    spec.client_of.push_back(client);
  return static_cast<tracer::ActionId>(spec.messages.size() - 1);
}

nlohmann::json step_json(const Step &step, const std::string &tick) {
  nlohmann::json json = nlohmann::json::object();
  if (!step.client.empty())
    json["client"] = step.client;
  switch (step.kind) {
  case Step::Kind::kSend:
    json["send"] = step.message;
    break;
  case Step::Kind::kDisconnect:
    json["disconnect"] = true;
    break;
  case Step::Kind::kTick:
    json["tick"] = tick;
    break;
  }
  return json;
}

std::string step_text(const Step &step, const std::string &tick) {
  const std::string who = step.client.empty() ? "" : step.client + ": ";
  switch (step.kind) {
  case Step::Kind::kSend:
    return fmt::format("{}send \"{}\"", who, encode_escapes(step.message));
  case Step::Kind::kDisconnect:
    return who + "disconnect";
  case Step::Kind::kTick:
    break;
  }
  return "tick " + tick;
}

nlohmann::json report_json(const search::Report &report,
                           const StepNames &names) {
  const bool violated = report.verdict == search::Verdict::kViolated;
  nlohmann::json counterexample = nullptr;
  if (violated) {
    counterexample = nlohmann::json::array();
    for (const tracer::ActionId action : report.counterexample)
      counterexample.push_back(
          step_json(step_of(*names.spec, action), names.tick));
  }
  const char *verdict = violated ? "violated" : "holds";
  if (report.interrupted)
    verdict = "error";
  nlohmann::json json = {
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
      {"counterexample", counterexample},
      {"violation", violated ? nlohmann::json(report.violation) : nullptr},
      {"error", report.interrupted ? nlohmann::json("interrupted") : nullptr},
      {"tick", names.tick.empty() ? nlohmann::json(nullptr)
                                  : nlohmann::json(names.tick)},
      {"max_ticks", names.max_ticks},
      {"seed", names.seed},
      {"state", names.path_states ? "path" : "regions"},
      {"once", names.once},
      {"masked", report.masked},
      {"restarts", report.restarts},
  };
  json["backtrace"] = nlohmann::json::array();
  for (const tracer::Frame &frame : report.backtrace)
    json["backtrace"].push_back(tracer::describe(frame));
  add_sources_json(json, report.sources);
  return json;
}

void add_sources_json(nlohmann::json &report, const tracer::Sources &sources) {
  nlohmann::json controlled = nlohmann::json::array();
  nlohmann::json uncontrolled = nlohmann::json::array();
  for_each_used(sources, [&](const tracer::SourceInfo &info, tracer::Via via) {
    (info.controlled ? controlled : uncontrolled)
        .push_back({{"source", info.name},
                    {"via", via_name(via)},
                    {"control", info.control}});
  });
  report["sources"] = controlled;
  report["uncontrolled"] = uncontrolled;
}

void print_backtrace(std::FILE *out, const std::vector<tracer::Frame> &frames,
                     std::size_t at_most) {
  for (std::size_t i = 0; i < std::min(frames.size(), at_most); ++i)
    fmt::print(out, "  {} #{} {}\n", i == 0 ? "at" : "  ", i,
               tracer::describe(frames[i]));
  if (frames.size() > at_most)
    fmt::print(out, "     ...\n");
}

void print_sources(std::FILE *out, const tracer::Sources &sources) {
  fmt::print(out, "time and randomness:{}\n",
             sources == tracer::Sources{} ? " none used" : "");
  for_each_used(sources, [&](const tracer::SourceInfo &info, tracer::Via via) {
    fmt::print(out, "  {}{} ({}): {}\n",
               info.controlled ? "" : "NOT CONTROLLED: ", info.name,
               via_name(via), info.control);
  });
}

nlohmann::json error_json(const std::string &message) {
  return {{"verdict", "error"},        {"complete", false},
          {"distinct_states", 0},      {"dedup_merges", 0},
          {"transitions", 0},          {"max_depth", 0},
          {"counterexample", nullptr}, {"violation", nullptr},
          {"error", message}};
}

JsonOutput::JsonOutput(const std::string &destination)
    : destination_(destination) {
  if (destination.empty() || destination == "-")
    return;
  file_.open(destination);
  if (!file_)
    usage(fmt::format("cannot write --json {}: {}", destination,
                      std::strerror(errno)));
}

void JsonOutput::write(const nlohmann::json &json) {
  if (destination_.empty())
    return;
  std::ostream &out = destination_ == "-" ? std::cout : file_;
  out << json.dump(2) << '\n' << std::flush;
  if (!out)
    cannot_check(fmt::format("cannot write the JSON to {}", destination_));
}

void print_report(std::FILE *out, const search::Report &report,
                  const StepNames &names) {
  const std::string counts =
      names.path_states
          ? fmt::format("{} paths, {} transitions", report.distinct_states,
                        report.transitions)
          : fmt::format("{} distinct states, {} dedup merges, {} transitions",
                        report.distinct_states, report.dedup_merges,
                        report.transitions);
  const char *tree = names.path_states
                         ? "no --region: every path is its own state (no "
                           "dedup); "
                         : "";
  if (report.interrupted) {
    fmt::print(out,
               "interrupted: {} explored so far, up to depth {} (not "
               "complete; no verdict)\n",
               counts, report.max_depth);
  } else if (report.verdict == search::Verdict::kViolated) {
    fmt::print(out, "violated: {}\n", report.violation);
    print_backtrace(out, report.backtrace, 4);
    fmt::print(out, "shortest counterexample ({} step{}):\n",
               report.counterexample.size(),
               report.counterexample.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < report.counterexample.size(); ++i)
      fmt::print(out, "  {}. {}\n", i + 1,
                 step_text(step_of(*names.spec, report.counterexample[i]),
                           names.tick));
    fmt::print(out, "found after {}{}\n", counts,
               names.path_states ? " (no --region: every path is its own "
                                   "state, no dedup)"
                                 : "");
  } else if (report.complete) {
    fmt::print(out, "{}holds: {}; every reachable state explored (depth {})\n",
               tree, counts, report.max_depth);
  } else {
    fmt::print(out,
               "{}holds up to depth {}{}: {} (search cut by a bound, not "
               "complete)\n",
               tree, report.max_depth,
               report.ticks_cut
                   ? fmt::format(" and {} tick(s) per path", names.max_ticks)
                   : "",
               counts);
  }
  print_state_settings(out, report, names);
  print_sources(out, report.sources);
  fmt::print(out,
             "{:.2f} s, {:.0f} distinct states/s, {:.0f} transitions/s; "
             "fingerprint collision probability {:.1e}\n",
             report.elapsed_s,
             per_second(report.distinct_states, report.elapsed_s),
             per_second(report.transitions, report.elapsed_s),
             collision_probability(report.distinct_states));
}

} // namespace cmc::app
