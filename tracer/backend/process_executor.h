#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "tracer/capture/process_capture.h"
#include "tracer/control/target_run.h"
#include "tracer/process/tracee.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/snapshot/snapshot.h"

namespace cmc::tracer {

// The real backend: each run() spawns the target under ptrace, connects
// once it listens and waits, and sends one message per step. With
// TargetSpec::snapshots it keeps its last target alive and the states it
// saved of it (Snapshot), and takes a path from the longest prefix saved,
// restored in place; it starts a fresh target only when there is none, or
// when a restore is refused.
class ProcessExecutor final : public executor::Executor {
public:
  explicit ProcessExecutor(std::shared_ptr<const TargetSpec> spec);
  [[nodiscard]] Result<executor::Observation>
  run(std::span<const executor::PathStep> path) override;
  void keep_states() override { keep_states_ = true; }
  // A new mask drops the saved states: their fingerprints were read with
  // the old one.
  void set_mask(std::span<const std::size_t> offsets) override;
  void set_process_mask(std::span<const decoder::Location> mask) override;
  void keep_images() override { keep_images_ = true; }
  void describe_changes() override { describe_ = true; }
  void replay_only() override { replay_only_ = true; }

private:
  // A state of the run as read: its region bytes and files.
  struct Reading {
    std::vector<std::byte> state;
    std::vector<executor::FileDigest> files;
    // With describe_changes: the whole process, with its bytes.
    std::optional<decoder::CanonicalState> process;
  };
  // A saved state: the snapshot, and what the run that reached it
  // observed before it (its own fingerprint and bytes left out: they are
  // read again once it is restored).
  struct Kept {
    Snapshot snapshot;
    executor::Observation seen;
    std::size_t bytes = 0;
    std::uint64_t used = 0; // when last restored or saved, for eviction
  };
  [[nodiscard]] Result<TargetRun> start();
  [[nodiscard]] Result<executor::Observation>
  replay(std::span<const executor::PathStep> path);
  // run() with snapshots: from the longest prefix of path kept, else from
  // a fresh target that becomes the live one.
  [[nodiscard]] Result<executor::Observation>
  branch(std::span<const executor::PathStep> path);
  // The state kept for the longest prefix of path (of taken steps), or
  // nullptr (none, or no live target).
  [[nodiscard]] Kept *longest_kept(std::span<const executor::PathStep> path,
                                   std::size_t &taken);
  // Restores kept, the state after path's first taken steps, into the
  // live target and reads it into seen and now; false, with the reason in
  // seen, when refused (the live target is then in no state known).
  [[nodiscard]] Result<bool> restore(Kept &kept,
                                     std::span<const executor::PathStep> path,
                                     std::size_t taken,
                                     executor::Observation &seen, Reading &now);
  // Replaces the live target with a fresh one in its initial state, read
  // into seen (whose refusals stay) and now; keeps that state when path's
  // last step starts from it.
  [[nodiscard]] Result<void>
  start_live(std::span<const executor::PathStep> path,
             executor::Observation &seen, Reading &now);
  // Takes path's steps from the first taken on, from the state now (whose
  // observation seen holds); with keep, the state the last step starts
  // from is saved.
  [[nodiscard]] Result<executor::Observation>
  take_steps(TargetRun &target, std::span<const executor::PathStep> path,
             std::size_t taken, executor::Observation seen, Reading now,
             bool keep);
  // Saves the state target is in after path's first taken steps, seen
  // being what was observed up to it; a refusal's reason goes to seen.
  [[nodiscard]] Result<void> keep(TargetRun &target,
                                  std::span<const executor::PathStep> path,
                                  std::size_t taken,
                                  executor::Observation &seen);
  // Drops the saved states.
  void forget();
  // Drops the saved states least recently used until those kept fit in
  // TargetSpec::snapshot_memory.
  void evict();
  // Reads the state after taken of the path's steps steps into seen (its
  // fingerprint, and what else seen keeps of it) and now.
  [[nodiscard]] Result<void> observe(TargetRun &target, std::size_t taken,
                                     std::size_t steps,
                                     executor::Observation &seen, Reading &now);
  // Whether that state's whole process is read: each one for kept
  // images; else for kRegions the last one when audited, for the whole
  // process the last one and the one its last step starts from (which
  // the search recorded: replay checks it).
  [[nodiscard]] bool reads_process(std::size_t taken, std::size_t steps) const;
  // Whether a state's fingerprint is of its regions (kRegions, kPath),
  // read at every state, rather than of its whole process.
  [[nodiscard]] bool keys_on_regions() const;
  // The canonical whole process now, its cost in seen. A target of several
  // processes: the first one's, its fingerprint that of every process's
  // (in order of creation).
  [[nodiscard]] Result<decoder::CanonicalState>
  read_process(TargetRun &target, executor::Observation &seen);
  // With describe_changes: names what the last step changed, once its
  // state is read (taken == steps), from the state before it in now.
  void describe(std::size_t taken, std::size_t steps,
                const decoder::CanonicalState &canonical,
                executor::Observation &seen, Reading &now) const;
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
  bool describe_ = false;
  bool replay_only_ = false;
  // With snapshots: the live target, after the last run's steps, and the
  // states saved of it, by the path that reached them.
  std::optional<TargetRun> live_;
  std::map<std::vector<executor::PathStep>, Kept> kept_;
  std::size_t kept_bytes_ = 0;
  std::uint64_t uses_ = 0;
  std::size_t restores_ = 0;
};

// Pins the calling thread to one CPU of those cmc may use, a different one
// for each call in turn. A target inherits the CPU of the thread that forks
// it: a ptrace stop costs ~2.5 us on one CPU and ~65 us across two.
void pin_this_thread();

} // namespace cmc::tracer
