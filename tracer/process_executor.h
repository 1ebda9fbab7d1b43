#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tracer/executor.h"
#include "tracer/network_namespace.h"
#include "tracer/process_capture.h"
#include "tracer/target_run.h"
#include "tracer/tracee.h"

namespace cmc::tracer {

// The real backend: each run() spawns the target under ptrace, connects
// once it listens and waits, and sends one message per step.
class ProcessExecutor final : public Executor {
public:
  explicit ProcessExecutor(std::shared_ptr<const TargetSpec> spec);
  [[nodiscard]] Result<Observation>
  run(std::span<const ActionId> path) override;
  void keep_states() override { keep_states_ = true; }
  void set_mask(std::span<const std::size_t> offsets) override {
    mask_.assign(offsets.begin(), offsets.end());
  }
  void set_process_mask(std::span<const decoder::Location> mask) override {
    process_mask_.assign(mask.begin(), mask.end());
  }
  void keep_images() override { keep_images_ = true; }

private:
  // A state of the run as read: its region bytes and files.
  struct Reading {
    std::vector<std::byte> state;
    std::vector<FileDigest> files;
  };
  [[nodiscard]] Result<Observation> replay(std::span<const ActionId> path);
  // Reads the state after taken of the path's steps steps into seen (its
  // fingerprint, and what else seen keeps of it) and now.
  [[nodiscard]] Result<void> observe(const TargetRun &target, std::size_t taken,
                                     std::size_t steps, Observation &seen,
                                     Reading &now);
  // Whether that state's whole process is read: each one for kept
  // images; else for kRegions the last one when audited, for the whole
  // process the last one and the one its last step starts from (which
  // the search recorded: replay checks it).
  [[nodiscard]] bool reads_process(std::size_t taken, std::size_t steps) const;
  // Whether a state's fingerprint is of its regions (kRegions, kPath),
  // read at every state, rather than of its whole process.
  [[nodiscard]] bool keys_on_regions() const;
  // The canonical whole process now, its cost in seen.
  [[nodiscard]] Result<decoder::CanonicalState>
  read_process(const TargetRun &target, Observation &seen);
  // The region bytes now, the masked ones zeroed.
  [[nodiscard]] Result<std::vector<std::byte>>
  read_state(const TargetRun &target) const;

  std::shared_ptr<const TargetSpec> spec_;
  // Made on the first run, on the thread that uses this executor.
  std::optional<NetworkNamespace> netns_;
  LaunchSpec launch_; // spec_->launch, joining netns_
  // The first run found the bias from /proc/PID/maps, checked the regions
  // against the mappings and agreed with the auxiliary vector; later runs
  // take the bias from the auxiliary vector alone (cheaper to read).
  bool located_ = false;
  std::vector<std::size_t> mask_; // offsets read as zero
  bool keep_states_ = false;
  ProcessCapture capture_;
  std::vector<decoder::Location> process_mask_;
  bool keep_images_ = false;
};

// Pins the calling thread to one CPU of those cmc may use, a different one
// for each call in turn. A target inherits the CPU of the thread that forks
// it: a ptrace stop costs ~2.5 us on one CPU and ~65 us across two.
void pin_this_thread();

} // namespace cmc::tracer
