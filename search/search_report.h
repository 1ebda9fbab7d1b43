#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "search/property.h"
#include "search/state_graph.h"
#include "util/result.h"

namespace cmc::search {

// What a search is asked (Options) and what it found (Report): the search's
// vocabulary, shared by the search and the files that count and show it.
struct Options {
  std::size_t max_depth = std::numeric_limits<std::size_t>::max();
  std::size_t max_states = std::numeric_limits<std::size_t>::max();
  // Worker threads, 0 = one per CPU. More than the CPUs is allowed: while
  // the search runs, TBB's process-wide thread limit is set to this value.
  unsigned jobs = 1;
  // A progress line on stderr about once a second (runs longer than 1 s).
  bool progress = false;
  // Asked when a run fails: true means the user stopped the check (the
  // runs fail because their targets were killed), and the search returns
  // what it counted so far, marked interrupted, instead of an error.
  std::function<bool()> stop_requested;
  // The clock tick among the actions, if any, and how many a path may take:
  // the tick is not tried from a state whose path has max_ticks already
  // (the search is then not complete).
  std::optional<executor::ActionId> tick;
  std::size_t max_ticks = 1;
  // Actions [0, once_actions) (the messages, with --once) are taken at most
  // once per path; which of them a path took is then part of its state.
  std::size_t once_actions = 0;
  // Inside a step, up to this many switches away from a thread that could
  // go on (executor::PathStep::preempt_at; at most kMaxPreemptions): each
  // step is also taken preempted at each of its preemption points past its
  // last, in the order the run met them, until it has this many.
  std::size_t preemptions = 0;
  // What the executors' fingerprints are of (TargetSpec::state). With
  // kRegions and audit, each merge is audited: the executors fill
  // Observation::process_after, and a merge of two states whose whole
  // processes differ is counted as lossy (Report::abstraction).
  executor::StateKind state = executor::StateKind::kRegions;
  bool audit = false;
  // State bytes that differ between two runs of one path are masked (they
  // read as zero for fingerprints and properties) and the search starts
  // again, instead of failing: region offsets under kRegions, Locations of
  // the whole process (Executor::set_process_mask) else.
  bool mask_volatile = false;
  // Records the states and transitions (Report::graph): with the regions
  // as the state, each state's changed bytes too. Without it nothing is
  // recorded.
  bool graph = false;
};

enum class Verdict { kHolds, kViolated };

// The first merge that joined two states whose whole processes differ.
struct LossyMerge {
  std::vector<executor::PathStep> kept;   // the path of the state kept
  std::vector<executor::PathStep> merged; // the path merged into it
  // Where they differ: "heap chunk 5 (32 B)+24 'x' vs 'y'", or why no byte
  // is named.
  std::string difference;
};

// How the region abstraction fared against the whole process.
struct Abstraction {
  std::size_t merges = 0;       // audited (both states' processes known)
  std::size_t lossy_merges = 0; // whose processes differed
  std::optional<LossyMerge> first;
  // The lossy merges replayed to name where they differ (the first ones
  // found, at most kLossyMergesNamed), and the byte each run of differing
  // bytes starts at ("stack of thread 1+24"), with how many of them it
  // told apart.
  std::size_t named = 0;
  std::map<std::string, std::size_t> places;
};

// What the search exercised of one message.
struct MessageCoverage {
  std::size_t transitions = 0; // that sent it
  std::size_t read_whole = 0;  // after which the target had read all of it
  // Where the target waited after the first (in search order) transition
  // that did not read it whole.
  std::string waits_in;
};

// How the transitions were taken (tracer::TargetSpec::snapshots).
struct SnapshotCounts {
  std::size_t restored = 0; // from a state an executor saved
  std::size_t replayed = 0; // from a fresh start
  std::size_t checked = 0;  // restored ones checked against a replay
  // States that could not be saved or restored, by reason ("mappings").
  std::map<std::string, std::size_t> refusals;
  // The most bytes of saved states one worker kept, and how many states
  // they were.
  std::size_t memory = 0;
  std::size_t kept = 0;
};

struct Report {
  Verdict verdict = Verdict::kHolds;
  bool complete = true;     // false when max_depth or max_states cut the search
  bool interrupted = false; // stopped by the user; counts are partial
  std::size_t distinct_states = 0;
  std::size_t dedup_merges = 0;
  std::size_t transitions = 0;
  std::size_t max_depth = 0; // depth of the deepest distinct state
  double elapsed_s = 0;
  std::vector<executor::PathStep> counterexample; // empty unless violated
  std::string violation;                          // empty unless violated
  // A crash's: where the signal hit the target (Fault::backtrace).
  std::vector<executor::Frame> backtrace;
  bool ticks_cut = false; // some path stopped at max_ticks ticks
  // The most threads the target had at a state any run read: with more
  // than one, the threads ran in cmc's order, switched inside a step only
  // at Options::preemptions points.
  std::size_t max_threads = 1;
  // The sources of time and randomness the target used in any run.
  executor::Sources sources;
  // With mask_volatile: the masked bytes, by region ("cmc_state+1") in
  // offset order or by where they are in the process ("heap chunk 3 (32
  // B)+8"), and how often the search started again for them.
  std::vector<std::string> masked;
  std::size_t restarts = 0;
  // By action: what the messages among them were read; empty entries
  // (transitions 0) for the other actions.
  std::vector<MessageCoverage> coverage;
  // What each step of the counterexample did to the connections (empty
  // when the executor did not say).
  std::vector<executor::StepEffects> counterexample_effects;
  // With options.audit; else empty.
  std::optional<Abstraction> abstraction;
  // The heap walk of the last distinct state found (of the initial state
  // when no other), and the whole-process bytes read and hashed per run
  // (totals over the runs counted in runs_measured; 0 when the executor
  // reads no whole process).
  decoder::HeapSummary heap;
  std::size_t bytes_read = 0;
  std::size_t bytes_hashed = 0;
  // Left out by liveness (totals over the same runs).
  std::size_t dead_register_bytes = 0;
  std::size_t dead_red_zone_bytes = 0;
  std::size_t dead_frame_bytes = 0;
  std::size_t runs_measured = 0;
  SnapshotCounts snapshots;
  // With options.graph; else empty.
  std::optional<StateGraph> graph;
};

} // namespace cmc::search
