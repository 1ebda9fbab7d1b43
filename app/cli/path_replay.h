#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "app/report/report.h"
#include "app/report/step_report.h"
#include "search/property.h"
#include "tracer/control/target_run.h"
#include "tracer/syscalls/syscall_trace.h"

namespace cmc::app {

// What one step of a replayed path did.
struct StepOutcome {
  std::size_t step = 0; // from 0
  std::vector<tracer::TracedCall> calls;
  // The call the target waits in once the step ended; none when it died.
  std::optional<tracer::TracedCall> waiting_in;
  std::vector<std::string> received; // by client
  executor::StepEffects effects;
  std::optional<executor::Fault> fault; // the target died by the step
  std::vector<ByteChange> changes;      // of the regions; none when it died
  // By name, when the state is the whole process (state_changes); none
  // when it died.
  std::vector<std::string> state_changes;
};

// Sees a replay as it goes: `cmc replay` prints every step before the next
// one starts, so a step that hangs shows after those that did not.
class ReplayWatcher {
public:
  virtual ~ReplayWatcher() = default;
  // The calls the target made until it first waited for a client.
  virtual void started(const std::vector<tracer::TracedCall> &calls) = 0;
  virtual void stepping(std::size_t step) = 0;
  virtual void stepped(const StepOutcome &outcome) = 0;
};

// A path replayed once: what `cmc replay --json` reports of it.
struct PathReplay {
  std::string violation;          // "" when none showed
  std::size_t violation_step = 0; // from 1; 0 when none showed
  nlohmann::json startup_syscalls = nlohmann::json::array();
  // Each step as step_json has it, with "syscalls", "waiting_in",
  // "replies", "changes", "state_changes" and add_effects_json's keys.
  nlohmann::json steps = nlohmann::json::array();
};

// Takes actions (of spec, tick the text of --tick) once in a fresh target
// in a network namespace of its own, every system call observed by trace,
// until the target dies or a step breaks property; each step is reported
// as step_of(spec, action). Throws UserError when the target cannot be run.
[[nodiscard]] PathReplay
replay_path(const tracer::TargetSpec &spec,
            const std::vector<executor::PathStep> &actions,
            const std::string &tick, const search::Property &property,
            tracer::SyscallTrace &trace, ReplayWatcher &watcher);

// The report of `cmc replay --json` (docs/report-format.md) of replay;
// expected: the violation the replayed report found, "" when none.
[[nodiscard]] nlohmann::json replay_report_json(const PathReplay &replay,
                                                const std::string &expected);

} // namespace cmc::app
