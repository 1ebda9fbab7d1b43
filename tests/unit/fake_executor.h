#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <variant>
#include <vector>

#include "decoder/canonical_state.h"
#include "executor/executor.h"
#include "search/breadth_first.h"

namespace cmc::fake {

using Bytes = std::vector<std::byte>;

// What one step of the scripted system does: the next state, a fault of the
// target (its step field is filled in by the fake), or an Error of the
// executor itself.
using StepOutcome = std::variant<Bytes, executor::Fault, Error>;
using StepFunction =
    std::function<StepOutcome(const Bytes &state, executor::ActionId action)>;

// Disturbs the state reached after depth steps in the run numbered run (runs
// are numbered from 0 across all executors): uninitialised memory, a clock.
using Noise =
    std::function<void(std::size_t run, std::size_t depth, Bytes &state)>;

// What a step did to the connections, by the state it left and the action.
using EffectsFunction = std::function<executor::StepEffects(
    const Bytes &state, executor::ActionId action)>;

// How a step preempted at its points (PathStep::preempt_at) changes the
// state its action left.
using PreemptFunction =
    std::function<void(const executor::PathStep &step, Bytes &state)>;

// The fake as a whole process: its state bytes, cut into named pieces (as a
// canonical state is), the first region_bytes of which are the regions.
// The fingerprints are of the regions (kRegions) or of the whole state;
// with kRegions and audit, Observation::process_after is filled.
struct FakeProcess {
  executor::StateKind state = executor::StateKind::kProcess;
  bool audit = false;
  std::size_t region_bytes = 0;
  std::vector<decoder::StatePiece> pieces; // in order, covering the bytes
  decoder::HeapSummary heap;
};

// What an executor asked of its runs.
struct RunRequest {
  std::span<const std::size_t> mask;               // region offsets
  std::span<const decoder::Location> process_mask; // with a FakeProcess
  bool keep_images = false;
};

// A scripted transition system standing in for a traced target. Thread-safe:
// the executors made by factory() may run on several threads at once.
class FakeSystem {
public:
  FakeSystem(Bytes initial, StepFunction step)
      : initial_(std::move(initial)), step_(std::move(step)) {}

  // Set before the search starts.
  void set_noise(Noise noise) { noise_ = std::move(noise); }
  // Makes every run report each step's effects (without: none).
  void set_effects(EffectsFunction effects) { effects_ = std::move(effects); }
  // Threads: every step passes points preemption points (reported in its
  // effects), and a preempted one then changes the state as preempted
  // says.
  void set_preemption(std::uint32_t points, PreemptFunction preempted) {
    preemption_points_ = points;
    preempted_ = std::move(preempted);
  }
  // Every run fails with error, as when the target cannot be started.
  void set_start_error(Error error) { start_error_ = std::move(error); }
  // Makes the state a whole process (without: the state bytes are the
  // regions, and there is no process).
  void set_process(FakeProcess process) { process_ = std::move(process); }

  [[nodiscard]] search::ExecutorFactory factory();
  // Runs path; the masked bytes read as zero.
  Result<executor::Observation> run(std::span<const executor::PathStep> path,
                                    const RunRequest &request = {});
  // Runs that kept images.
  [[nodiscard]] std::size_t image_runs() const { return image_runs_.load(); }

  [[nodiscard]] std::size_t runs() const { return runs_.load(); }
  [[nodiscard]] std::size_t executors_made() const {
    return executors_made_.load();
  }
  // Times an executor was entered while another thread was inside it.
  [[nodiscard]] std::size_t concurrent_uses() const {
    return concurrent_uses_.load();
  }
  void note_concurrent_use() { ++concurrent_uses_; }

private:
  Bytes initial_;
  StepFunction step_;
  Noise noise_;
  EffectsFunction effects_;
  std::uint32_t preemption_points_ = 0;
  PreemptFunction preempted_;
  std::optional<Error> start_error_;
  std::optional<FakeProcess> process_;
  std::atomic<std::size_t> runs_{0};
  std::atomic<std::size_t> image_runs_{0};
  std::atomic<std::size_t> executors_made_{0};
  std::atomic<std::size_t> concurrent_uses_{0};
};

class FakeExecutor final : public executor::Executor {
public:
  explicit FakeExecutor(FakeSystem &system) : system_(system) {}

  Result<executor::Observation>
  run(std::span<const executor::PathStep> path) override {
    if (busy_.exchange(true))
      system_.note_concurrent_use();
    Result<executor::Observation> observation =
        system_.run(path, {mask_, process_mask_, keep_images_});
    busy_.store(false);
    return observation;
  }
  void set_mask(std::span<const std::size_t> offsets) override {
    mask_.assign(offsets.begin(), offsets.end());
  }
  void set_process_mask(std::span<const decoder::Location> mask) override {
    process_mask_.assign(mask.begin(), mask.end());
  }
  void keep_images() override { keep_images_ = true; }

private:
  FakeSystem &system_;
  std::vector<std::size_t> mask_;
  std::vector<decoder::Location> process_mask_;
  bool keep_images_ = false;
  std::atomic<bool> busy_{false};
};

inline search::ExecutorFactory FakeSystem::factory() {
  return [this] {
    ++executors_made_;
    return std::make_unique<FakeExecutor>(*this);
  };
}

// The state's bytes with the masked ones zeroed.
inline Bytes masked(Bytes state, const RunRequest &request,
                    const FakeProcess *process) {
  for (const std::size_t offset : request.mask)
    if (offset < state.size())
      state[offset] = std::byte{0};
  if (process == nullptr)
    return state;
  for (const decoder::Location &location : request.process_mask)
    for (const decoder::StatePiece &piece : process->pieces)
      if (piece.name == location.piece && location.offset < piece.size)
        state.at(piece.offset + location.offset) = std::byte{0};
  return state;
}

// The canonical state of the fake's whole process (masked bytes).
inline decoder::CanonicalState
canonical(const Bytes &state, const FakeProcess &process, bool keep_bytes) {
  decoder::CanonicalState image;
  image.fingerprint = fingerprint_of(state);
  if (keep_bytes) {
    image.bytes = state;
    image.pieces = process.pieces;
  }
  image.heap = process.heap;
  image.bytes_hashed = state.size();
  return image;
}

// Adds a state a run reached to observation: its regions, its fingerprint
// and, with a process, what reading it whole gives.
inline void record_state(executor::Observation &observation, const Bytes &state,
                         Bytes regions, const RunRequest &request,
                         const FakeProcess *process) {
  observation.states.push_back(std::move(regions));
  if (process == nullptr) {
    observation.fingerprints.push_back(
        fingerprint_of(observation.states.back()));
    return;
  }
  decoder::CanonicalState image =
      canonical(masked(state, request, process), *process, request.keep_images);
  observation.fingerprints.push_back(
      process->state == executor::StateKind::kRegions
          ? fingerprint_of(observation.states.back())
          : image.fingerprint);
  if (process->state == executor::StateKind::kRegions && process->audit)
    observation.process_after = image.fingerprint;
  observation.heap = image.heap;
  observation.bytes_read = state.size();
  observation.bytes_hashed = image.bytes_hashed;
  if (request.keep_images)
    observation.images.push_back(std::move(image));
}

inline Result<executor::Observation>
FakeSystem::run(std::span<const executor::PathStep> path,
                const RunRequest &request) {
  // The executor masks what it reads: the system's own state keeps the
  // bytes, so the steps still see them. The regions are the first bytes.
  const FakeProcess *process = process_ ? &*process_ : nullptr;
  const auto regions = [&](const Bytes &state) {
    Bytes bytes = masked(state, request, process);
    if (process != nullptr)
      bytes.resize(std::min(bytes.size(), process->region_bytes));
    return bytes;
  };
  const std::size_t run = runs_++;
  if (start_error_)
    return *start_error_;
  if (request.keep_images)
    ++image_runs_;
  Bytes state = initial_;
  if (noise_)
    noise_(run, 0, state);
  executor::Observation observation;
  // Every state is kept (Executor::keep_states is only a request), and one
  // client receives nothing.
  const auto record = [&] {
    record_state(observation, state, regions(state), request, process);
  };
  record();
  for (std::size_t i = 0; i < path.size(); ++i) {
    StepOutcome outcome = step_(state, path[i].action);
    if (auto *error = std::get_if<Error>(&outcome))
      return *error;
    observation.before = regions(state);
    observation.received.emplace_back(1);
    if (auto *fault = std::get_if<executor::Fault>(&outcome)) {
      observation.fault = *fault;
      observation.fault->step = i;
      observation.process_after.reset();
      return observation;
    }
    state = std::get<Bytes>(std::move(outcome));
    if (preempted_ && path[i].preemptions() != 0)
      preempted_(path[i], state);
    if (effects_ || preempted_) {
      executor::StepEffects &effects = observation.effects.emplace_back(
          effects_ ? effects_(state, path[i].action) : executor::StepEffects{});
      effects.preemption_points = preemption_points_;
    }
    if (noise_)
      noise_(run, i + 1, state);
    record();
  }
  observation.after = regions(state);
  return observation;
}

} // namespace cmc::fake
