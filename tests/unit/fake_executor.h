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

#include "search/breadth_first.h"
#include "tracer/executor.h"

namespace cmc::fake {

using Bytes = std::vector<std::byte>;

// What one step of the scripted system does: the next state, a fault of the
// target (its step field is filled in by the fake), or an Error of the
// executor itself.
using StepOutcome = std::variant<Bytes, tracer::Fault, Error>;
using StepFunction =
    std::function<StepOutcome(const Bytes &state, tracer::ActionId action)>;

// Disturbs the state reached after depth steps in the run numbered run (runs
// are numbered from 0 across all executors): uninitialised memory, a clock.
using Noise =
    std::function<void(std::size_t run, std::size_t depth, Bytes &state)>;

// What a step did to the connections, by the state it left and the action.
using EffectsFunction = std::function<tracer::StepEffects(
    const Bytes &state, tracer::ActionId action)>;

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
  // Every run fails with error, as when the target cannot be started.
  void set_start_error(Error error) { start_error_ = std::move(error); }

  [[nodiscard]] search::ExecutorFactory factory();
  // Runs path; the bytes at the offsets in mask read as zero.
  Result<tracer::Observation> run(std::span<const tracer::ActionId> path,
                                  std::span<const std::size_t> mask = {});

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
  std::optional<Error> start_error_;
  std::atomic<std::size_t> runs_{0};
  std::atomic<std::size_t> executors_made_{0};
  std::atomic<std::size_t> concurrent_uses_{0};
};

class FakeExecutor final : public tracer::Executor {
public:
  explicit FakeExecutor(FakeSystem &system) : system_(system) {}

  Result<tracer::Observation>
  run(std::span<const tracer::ActionId> path) override {
    if (busy_.exchange(true))
      system_.note_concurrent_use();
    Result<tracer::Observation> observation = system_.run(path, mask_);
    busy_.store(false);
    return observation;
  }
  void set_mask(std::span<const std::size_t> offsets) override {
    mask_.assign(offsets.begin(), offsets.end());
  }

private:
  FakeSystem &system_;
  std::vector<std::size_t> mask_;
  std::atomic<bool> busy_{false};
};

inline search::ExecutorFactory FakeSystem::factory() {
  return [this] {
    ++executors_made_;
    return std::make_unique<FakeExecutor>(*this);
  };
}

inline Result<tracer::Observation>
FakeSystem::run(std::span<const tracer::ActionId> path,
                std::span<const std::size_t> mask) {
  // The executor masks what it reads: the system's own state keeps the
  // bytes, so the steps still see them.
  const auto masked = [mask](Bytes state) {
    for (const std::size_t offset : mask)
      if (offset < state.size())
        state[offset] = std::byte{0};
    return state;
  };
  const std::size_t run = runs_++;
  if (start_error_)
    return *start_error_;
  Bytes state = initial_;
  if (noise_)
    noise_(run, 0, state);
  tracer::Observation observation;
  // Every state is kept (Executor::keep_states is only a request), and one
  // client receives nothing.
  const auto record = [&] {
    observation.states.push_back(masked(state));
    observation.fingerprints.push_back(
        fingerprint_of(observation.states.back()));
  };
  record();
  for (std::size_t i = 0; i < path.size(); ++i) {
    StepOutcome outcome = step_(state, path[i]);
    if (auto *error = std::get_if<Error>(&outcome))
      return *error;
    observation.before = masked(state);
    observation.received.emplace_back(1);
    if (auto *fault = std::get_if<tracer::Fault>(&outcome)) {
      observation.fault = *fault;
      observation.fault->step = i;
      return observation;
    }
    state = std::get<Bytes>(std::move(outcome));
    if (effects_)
      observation.effects.push_back(effects_(state, path[i]));
    if (noise_)
      noise_(run, i + 1, state);
    record();
  }
  observation.after = masked(std::move(state));
  return observation;
}

} // namespace cmc::fake
