#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoder/region.h"
#include "tracer/executor.h"
#include "tracer/network_namespace.h"
#include "tracer/tracee.h"

namespace cmc::tracer {

// What ProcessExecutor runs and reads.
struct TargetSpec {
  LaunchSpec launch;
  // Regions at their link-time addresses; the load bias is added per run.
  std::vector<decoder::Region> regions;
  std::uint64_t load_base = 0; // decoder::ElfFile::load_base
  std::uint64_t entry = 0;     // decoder::ElfFile::entry
  // The alphabet: ActionId i < messages.size() sends messages[i]; with a
  // tick, ActionId messages.size() advances the virtual clock by *tick.
  std::vector<std::string> messages;
  std::optional<std::chrono::nanoseconds> tick;
  std::uint64_t seed = 0; // seeds getrandom, /dev/urandom and AT_RANDOM
  std::optional<std::uint16_t> port; // connect here instead of asking listen
  std::chrono::milliseconds step_timeout{10000};
};

// The real backend: each run() spawns the target under ptrace, connects
// once it listens and waits, and sends one message per step.
class ProcessExecutor final : public Executor {
public:
  explicit ProcessExecutor(std::shared_ptr<const TargetSpec> spec);
  [[nodiscard]] Result<Observation>
  run(std::span<const ActionId> path) override;

private:
  [[nodiscard]] Result<Observation> replay(std::span<const ActionId> path);

  std::shared_ptr<const TargetSpec> spec_;
  // Made on the first run, on the thread that uses this executor.
  std::optional<NetworkNamespace> netns_;
  LaunchSpec launch_; // spec_->launch, joining netns_
  // The first run found the bias from /proc/PID/maps, checked the regions
  // against the mappings and agreed with the auxiliary vector; later runs
  // take the bias from the auxiliary vector alone (cheaper to read).
  bool located_ = false;
};

// Pins the calling thread to one CPU of those cmc may use, a different one
// for each call in turn. A target inherits the CPU of the thread that forks
// it: a ptrace stop costs ~2.5 us on one CPU and ~65 us across two.
void pin_this_thread();

} // namespace cmc::tracer
