#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/executor.h"
#include "tracer/control/target_run.h"
#include "util/result.h"

namespace cmc::app {

// One step of a path, by value.
struct Step {
  enum class Kind { kSend, kDisconnect, kTick, kCrash };
  Kind kind = Kind::kSend;
  std::string client;  // "" with one unnamed client; "" for a tick, crash
  std::string message; // kSend: the decoded bytes
  // The points of the step at which cmc's scheduler switched threads
  // (executor::PathStep::preempt_at); empty without --preemptions.
  std::vector<std::uint32_t> preempt_at{};
};

// The step that action is in the alphabet of spec.
[[nodiscard]] Step step_of(const tracer::TargetSpec &spec,
                           const executor::PathStep &step);
// The action that step is in the alphabet of spec (the inverse of
// step_of). A client or message spec lacks is added to it, a
// disconnect turns spec.disconnect on and a crash spec.crash: each addition
// moves the disconnect and tick actions, so an action of those is good until
// the next one.
[[nodiscard]] executor::PathStep action_of(tracer::TargetSpec &spec,
                                           const Step &step);
// "3,7": the preemption points of a step as the user lists them (replay
// --preempt, explore's preempt): from 1 to executor::kMaxPreemptions
// numbers, each from 1, ascending.
[[nodiscard]] Result<std::vector<std::uint32_t>>
parse_preemption_points(std::string_view list);
// {"client": "A", "send": "LOCK\n"}, {"tick": "10s"}, {"crash": true}, ...
[[nodiscard]] nlohmann::json step_json(const Step &step,
                                       const std::string &tick);
// A: send "LOCK\n", tick 10s, crash, ...
[[nodiscard]] std::string step_text(const Step &step, const std::string &tick);

// What names the steps of a counterexample and the settings of the check.
struct StepNames {
  std::shared_ptr<const tracer::TargetSpec> spec;
  std::string tick; // "10s"; "" without --tick
  std::size_t max_ticks = 0;
  std::uint64_t seed = 0;
  bool once = false;           // --once
  std::size_t preemptions = 0; // --preemptions
  bool no_property = false;    // no invariant, response or plugin property
  bool plugins = false;        // a --property plugin
  // --max-depth and --max-states; none: unbounded.
  std::optional<std::size_t> max_depth{};
  std::optional<std::size_t> max_states{};
  unsigned jobs = 0; // the worker threads the search ran
};

} // namespace cmc::app
