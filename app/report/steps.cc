#include "app/report/steps.h"

#include <algorithm>
#include <charconv>
#include <span>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/escape.h"

namespace cmc::app {
namespace {

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

Step step_of(const tracer::TargetSpec &spec, const executor::PathStep &step) {
  const auto client_name = [&](std::size_t client) {
    return spec.clients.empty() ? std::string() : spec.clients.at(client);
  };
  const executor::ActionId action = step.action;
  const std::span<const std::uint32_t> points = step.points();
  std::vector<std::uint32_t> preempt_at(points.begin(), points.end());
  if (spec.crash && action == spec.crash_action())
    return {Step::Kind::kCrash, "", "", std::move(preempt_at)};
  if (spec.tick && action == spec.tick_action())
    return {Step::Kind::kTick, "", "", std::move(preempt_at)};
  if (action >= spec.first_disconnect())
    return {Step::Kind::kDisconnect,
            client_name(action - spec.first_disconnect()), "",
            std::move(preempt_at)};
  return {Step::Kind::kSend, client_name(spec.client_of_message(action)),
          spec.messages.at(action), std::move(preempt_at)};
}

namespace {

executor::ActionId alphabet_action(tracer::TargetSpec &spec, const Step &step) {
  if (step.kind == Step::Kind::kTick)
    return spec.tick_action();
  if (step.kind == Step::Kind::kCrash) {
    spec.crash = true;
    spec.launch.durable = true;
    return spec.crash_action();
  }
  const std::size_t client = client_index(spec, step.client);
  if (step.kind == Step::Kind::kDisconnect) {
    spec.disconnect = true;
    return static_cast<executor::ActionId>(spec.first_disconnect() + client);
  }
  for (std::size_t i = 0; i < spec.messages.size(); ++i)
    if (spec.messages[i] == step.message && spec.client_of_message(i) == client)
      return static_cast<executor::ActionId>(i);
  spec.messages.push_back(step.message);
  if (!spec.clients.empty())
    spec.client_of.push_back(client);
  return static_cast<executor::ActionId>(spec.messages.size() - 1);
}

} // namespace

executor::PathStep action_of(tracer::TargetSpec &spec, const Step &step) {
  executor::PathStep action = alphabet_action(spec, step);
  for (const std::uint32_t point : step.preempt_at)
    action = action.preempted_at(point);
  return action;
}

Result<std::vector<std::uint32_t>>
parse_preemption_points(std::string_view list) {
  std::vector<std::uint32_t> points;
  while (true) {
    const std::string_view word = list.substr(0, list.find(','));
    std::uint32_t point = 0;
    const auto [end, failed] =
        std::from_chars(word.data(), word.data() + word.size(), point);
    if (failed != std::errc() || end != word.data() + word.size() || point == 0)
      return Error{fmt::format("'{}' is no preemption point (a number from "
                               "1)",
                               encode_escapes(word))};
    if (!points.empty() && point <= points.back())
      return Error{"the preemption points of a step ascend"};
    points.push_back(point);
    if (word.size() == list.size())
      break;
    list.remove_prefix(word.size() + 1);
  }
  if (points.size() > executor::kMaxPreemptions)
    return Error{fmt::format("at most {} preemption points a step",
                             executor::kMaxPreemptions)};
  return points;
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
  case Step::Kind::kCrash:
    json["crash"] = true;
    break;
  }
  if (!step.preempt_at.empty())
    json["preempt"] = step.preempt_at;
  return json;
}

std::string step_text(const Step &step, const std::string &tick) {
  const std::string who = step.client.empty() ? "" : step.client + ": ";
  std::string text = "tick " + tick;
  if (step.kind == Step::Kind::kSend)
    text = fmt::format("{}send \"{}\"", who, encode_escapes(step.message));
  else if (step.kind == Step::Kind::kDisconnect)
    text = who + "disconnect";
  else if (step.kind == Step::Kind::kCrash)
    text = "crash";
  if (!step.preempt_at.empty())
    text += fmt::format(" preempted at {}", fmt::join(step.preempt_at, ", "));
  return text;
}

} // namespace cmc::app
