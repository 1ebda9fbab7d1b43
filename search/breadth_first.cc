#include "search/breadth_first.h"

#include <fmt/ranges.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>

#include "search/merge_audit.h"
#include "search/nondeterminism.h"
#include "search/path_rules.h"
#include "search/progress_meter.h"
#include "search/recorded_states.h"
#include "search/report_counts.h"
#include "search/state_store.h"
#include "util/check.h"
#include "util/log.h"

namespace cmc::search {
namespace {

using Clock = std::chrono::steady_clock;
using executor::ActionId;
using executor::PathStep;

// Transitions per worker thread run between two merges. Large enough that
// the wait for the slowest run of a batch costs little, small enough that a
// violation stops the search soon and the observations held stay few.
constexpr std::size_t kBatchPerWorker = 256;
// Runs of a prefix that diagnose() compares with the first when two agreed
// but an earlier run did not.
constexpr std::size_t kMoreRuns = 6;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One (state, action) pair: the state is replayed and the action taken.
struct Transition {
  std::uint32_t from = 0;
  PathStep action;
  std::vector<PathStep> path;
  std::optional<Result<executor::Observation>> observation;
  bool beyond_ticks = false; // not run: its path takes too many ticks
  bool taken = false;        // not run: --once, and the path took it before
  // The property's check_path, done by the worker that ran it: the bytes of
  // every state are then dropped, not held for the whole batch.
  std::optional<std::string> path_violation;
};

// kRestart: new volatile bytes were masked; the search must start again.
enum class Outcome { kContinue, kViolated, kRestart };

class Search {
public:
  Search(const ExecutorFactory &factory, std::size_t alphabet_size,
         const Property &property, const std::vector<RegionLayout> &layout,
         const Options &options);

  Result<Report> run();

private:
  std::unique_ptr<executor::Executor> make_executor();
  Result<Outcome> search();
  void restart();
  Result<Outcome> expand_level(std::uint32_t begin, std::uint32_t end);
  // Runs and merges the transitions of batch; merge() may add more
  // (preempted_).
  Result<Outcome> run_and_merge(std::vector<Transition> &batch);
  // After a transition taken without fault or violation: the same step
  // preempted once more, at each point it passed past its last (with
  // --preemptions), to be taken in this level; the search goes on.
  Outcome add_preempted(const Transition &transition,
                        const executor::Observation &observation);
  // The partial report when the user stopped the search, else error.
  Result<Report> stopped_or(const Error &error);
  void run_batch(std::vector<Transition> &batch);
  Result<Outcome> merge(const Transition &transition);
  // Runs the property's check_path on a transition just run, when it
  // needs the path.
  void check_path(Transition &transition) const;
  Result<Outcome> check_replay(const Transition &transition,
                               const executor::Observation &observation);
  // Why the state after prefix had another fingerprint in a run whose
  // bytes of it are seen than in the run that recorded it, whose bytes
  // were recorded (either empty: not known).
  Result<Outcome> diagnose(std::span<const PathStep> prefix,
                           std::span<const std::byte> seen,
                           std::span<const std::byte> recorded);
  // Whole-process bytes that differ only now and then: more runs of
  // prefix on the probe compared with its image of the state; nothing
  // when they all agree.
  Result<std::optional<Outcome>>
  more_runs(std::span<const PathStep> prefix,
            const decoder::CanonicalState &image);
  // The same on a new executor: bytes that differ between workers (each
  // runs its targets in a network namespace of its own, made at another
  // time), which the probe's runs never see.
  Result<std::optional<Outcome>>
  other_worker(std::span<const PathStep> prefix,
               const decoder::CanonicalState &image);
  Result<std::optional<executor::Observation>>
  twice_or_mask(std::span<const PathStep> prefix);
  // Masks the bytes; false when every one of them was masked already.
  bool add_to_mask(const Differing &differing);
  void set_masks(executor::Executor &executor) const;
  [[nodiscard]] Fingerprint identity(const Fingerprint &fingerprint,
                                     std::span<const PathStep> prefix) const;
  [[nodiscard]] bool beyond_ticks(std::span<const PathStep> path) const;
  [[nodiscard]] bool taken_before(std::span<const PathStep> path) const;
  // A transition taken from a restored snapshot, checked against a replay
  // of its path on the probe: a difference stops the search, unless two
  // replays differ too (volatile bytes: masked with mask_volatile).
  Result<Outcome> check_restore(std::span<const PathStep> path,
                                const executor::Observation &observation);
  [[nodiscard]] std::optional<Fingerprint>
  audited_process(const executor::Observation &observation) const;
  Result<void> add_or_merge(const Fingerprint &fingerprint,
                            const Transition &from,
                            const executor::Observation &observation);
  // Counts a merge of the state after from into state index, and names
  // the first whose whole processes differ.
  Result<void> audit_merge(std::uint32_t index, const Transition &from,
                           const executor::Observation &observation);

  const ExecutorFactory &factory_;
  const std::size_t alphabet_size_;
  const Property &property_;
  const std::vector<RegionLayout> &layout_;
  const Options &options_;
  const std::size_t state_limit_;
  const Clock::time_point start_ = Clock::now();

  std::mutex factory_mutex_;
  const int concurrency_;
  // Lets the arena have options.jobs threads even beyond the CPU count:
  // TBB otherwise caps every arena at the number of CPUs.
  tbb::global_control parallelism_;
  tbb::task_arena arena_;
  // Offsets of the masked region bytes and the masked process locations,
  // sorted; set on every executor. Set before the executors, which read
  // them when they are made.
  std::vector<std::size_t> mask_;
  std::vector<decoder::Location> process_mask_;
  tbb::enumerable_thread_specific<std::unique_ptr<executor::Executor>>
      executors_;
  // Initial check and diagnoses; it keeps images (naming the process bytes
  // two runs differ in) unless the state is the regions.
  std::unique_ptr<executor::Executor> probe_;
  // Replays the first lossy merge's paths with images; made then.
  std::unique_ptr<executor::Executor> auditor_;
  ProgressMeter progress_;

  StateStore store_;
  RecordedStates recorded_; // with mask_volatile only
  Report report_;
  std::size_t depth_ = 0; // of the states being expanded
  // The preempted steps of this level not taken yet (add_preempted).
  std::vector<Transition> preempted_;
};

Search::Search(const ExecutorFactory &factory, std::size_t alphabet_size,
               const Property &property,
               const std::vector<RegionLayout> &layout, const Options &options)
    : factory_(factory), alphabet_size_(alphabet_size), property_(property),
      layout_(layout), options_(options),
      state_limit_(std::min(options.max_states, StateStore::kCapacity)),
      concurrency_(options.jobs == 0 ? tbb::info::default_concurrency()
                                     : static_cast<int>(options.jobs)),
      parallelism_(tbb::global_control::max_allowed_parallelism, concurrency_),
      arena_(concurrency_), executors_([this] { return make_executor(); }),
      probe_(make_executor()), progress_(options.progress, start_) {
  if (options.state == executor::StateKind::kProcess ||
      options.state == executor::StateKind::kRaw)
    probe_->keep_images();
  probe_->replay_only();
  if (options.audit)
    report_.abstraction.emplace();
  if (options.graph)
    report_.graph.emplace();
}

std::unique_ptr<executor::Executor> Search::make_executor() {
  const std::lock_guard lock(factory_mutex_);
  std::unique_ptr<executor::Executor> executor = factory_();
  CMC_CHECK(executor != nullptr, "executor factory returned nothing");
  set_masks(*executor);
  if (options_.mask_volatile || property_.needs_path())
    executor->keep_states();
  if (options_.graph)
    executor->describe_changes();
  return executor;
}

Result<Report> Search::run() {
  while (true) {
    Result<Outcome> outcome = search();
    if (!outcome)
      return stopped_or(outcome.error());
    if (*outcome != Outcome::kRestart)
      break;
    restart();
  }
  report_.elapsed_s = seconds_since(start_);
  return report_;
}

// One search from the initial state on, with the mask as it is.
Result<Outcome> Search::search() {
  Result<std::optional<executor::Observation>> initial = twice_or_mask({});
  if (!initial)
    return initial.error();
  if (!*initial)
    return Outcome::kRestart;
  report_.sources.merge((*initial)->sources);
  report_.max_threads = (*initial)->threads;
  report_.heap = (*initial)->heap;
  count_cost(report_, **initial);
  store_.add(identity((*initial)->fingerprints.back(), {}),
             StateStore::kNoParent, 0, audited_process(**initial));
  record_state(report_.graph, **initial, options_.state);
  if (options_.mask_volatile)
    recorded_.add((*initial)->after);
  report_.distinct_states = 1;
  std::uint32_t begin = 0;
  while (begin < store_.size()) {
    const auto end = static_cast<std::uint32_t>(store_.size());
    if (depth_ == options_.max_depth) {
      if (alphabet_size_ > 0)
        report_.complete = false;
      break;
    }
    CMC_LOG_DEBUG("search", "depth {}: {} states to expand", depth_,
                  end - begin);
    Result<Outcome> outcome = expand_level(begin, end);
    if (!outcome || *outcome != Outcome::kContinue)
      return outcome;
    begin = end;
    ++depth_;
  }
  return Outcome::kContinue;
}

// The fingerprints recorded so far include bytes now masked, so replays
// would no longer match them: the search starts over from the initial
// state, and every fingerprint it records is of the masked kind. The mask
// only grows, by at least one byte each time (a masked byte reads as zero
// in every run, so it never differs again): there are at most as many
// restarts as state bytes.
void Search::restart() {
  Report fresh;
  fresh.sources = report_.sources;
  fresh.masked = report_.masked;
  fresh.restarts = report_.restarts + 1;
  if (options_.audit)
    fresh.abstraction.emplace();
  if (options_.graph)
    fresh.graph.emplace();
  report_ = std::move(fresh);
  store_ = StateStore();
  recorded_.clear();
  depth_ = 0;
}

Result<Report> Search::stopped_or(const Error &error) {
  const bool requested = options_.stop_requested && options_.stop_requested();
  if (!error.interrupted() && !requested)
    return error;
  report_.interrupted = true;
  report_.complete = false;
  report_.elapsed_s = seconds_since(start_);
  return report_;
}

Result<Outcome> Search::expand_level(std::uint32_t begin, std::uint32_t end) {
  const std::size_t count = (end - begin) * alphabet_size_;
  const std::size_t batch_size =
      kBatchPerWorker * static_cast<std::size_t>(concurrency_);
  for (std::size_t first = 0; first < count; first += batch_size) {
    std::vector<Transition> batch(std::min(batch_size, count - first));
    for (std::size_t i = 0; i < batch.size(); ++i) {
      batch[i].from = begin + (first + i) / alphabet_size_;
      batch[i].action = static_cast<ActionId>((first + i) % alphabet_size_);
    }
    if (Result<Outcome> outcome = run_and_merge(batch);
        !outcome || *outcome != Outcome::kContinue)
      return outcome;
    // The states not expanded yet: those of this level after the batch's,
    // and those found for the next.
    const std::size_t expanded =
        begin + (first + batch.size()) / alphabet_size_;
    progress_.update(report_, depth_,
                     report_.distinct_states -
                         std::min(expanded, report_.distinct_states));
  }
  // Then the steps preempted, in the order they were found, each adding
  // those preempted once more.
  while (!preempted_.empty()) {
    const std::size_t size = std::min(batch_size, preempted_.size());
    std::vector<Transition> batch(
        std::make_move_iterator(preempted_.begin()),
        std::make_move_iterator(preempted_.begin() +
                                static_cast<std::ptrdiff_t>(size)));
    preempted_.erase(preempted_.begin(),
                     preempted_.begin() + static_cast<std::ptrdiff_t>(size));
    if (Result<Outcome> outcome = run_and_merge(batch);
        !outcome || *outcome != Outcome::kContinue)
      return outcome;
    progress_.update(report_, depth_,
                     report_.distinct_states -
                         std::min<std::size_t>(end, report_.distinct_states));
  }
  return Outcome::kContinue;
}

Result<Outcome> Search::run_and_merge(std::vector<Transition> &batch) {
  run_batch(batch);
  for (const Transition &transition : batch) {
    Result<Outcome> outcome = merge(transition);
    if (!outcome || *outcome != Outcome::kContinue)
      return outcome;
  }
  return Outcome::kContinue;
}

Outcome Search::add_preempted(const Transition &transition,
                              const executor::Observation &observation) {
  const PathStep &step = transition.action;
  if (step.preemptions() >= options_.preemptions ||
      observation.effects.size() != transition.path.size())
    return Outcome::kContinue;
  const std::span<const std::uint32_t> points = step.points();
  const std::uint32_t last = points.empty() ? 0 : points.back();
  for (std::uint32_t point = last + 1;
       point <= observation.effects.back().preemption_points; ++point)
    preempted_.push_back(Transition{.from = transition.from,
                                    .action = step.preempted_at(point)});
  return Outcome::kContinue;
}

// The store is only read here; merges happen after the batch has run.
void Search::run_batch(std::vector<Transition> &batch) {
  arena_.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, batch.size(), 1),
        [&](const tbb::blocked_range<std::size_t> &range) {
          executor::Executor &executor = *executors_.local();
          for (std::size_t i = range.begin(); i != range.end(); ++i) {
            Transition &transition = batch[i];
            transition.path = store_.path_of(transition.from);
            transition.path.push_back(transition.action);
            if (taken_before(transition.path)) {
              transition.taken = true;
              continue;
            }
            if (beyond_ticks(transition.path)) {
              transition.beyond_ticks = true;
              continue;
            }
            transition.observation.emplace(executor.run(transition.path));
            check_path(transition);
          }
        },
        tbb::simple_partitioner());
  });
}

bool Search::beyond_ticks(std::span<const PathStep> path) const {
  return ticks_in(path, options_.tick) > options_.max_ticks;
}

bool Search::taken_before(std::span<const PathStep> path) const {
  return search::taken_before(path.first(path.size() - 1), path.back().action,
                              options_.once_actions);
}

Fingerprint Search::identity(const Fingerprint &fingerprint,
                             std::span<const PathStep> prefix) const {
  return state_identity(fingerprint, prefix, options_.once_actions,
                        options_.state);
}

void Search::check_path(Transition &transition) const {
  if (!property_.needs_path() || !*transition.observation)
    return;
  executor::Observation &observation = **transition.observation;
  if (observation.fault)
    return;
  CMC_CHECK(observation.states.size() == transition.path.size() + 1,
            "executor kept every state");
  transition.path_violation = property_.check_path(
      {transition.path, observation.states, observation.received});
  if (!options_.mask_volatile)
    observation.states = {};
}

Result<Outcome> Search::merge(const Transition &transition) {
  if (transition.taken)
    return Outcome::kContinue;
  if (transition.beyond_ticks) {
    report_.ticks_cut = true;
    report_.complete = false;
    return Outcome::kContinue;
  }
  const Result<executor::Observation> &result = *transition.observation;
  if (!result)
    return result.error();
  const executor::Observation &observation = *result;
  count_run(report_, observation);
  if (observation.check_restore)
    if (Result<Outcome> same = check_restore(transition.path, observation);
        !same || *same != Outcome::kContinue)
      return same;
  if (Result<Outcome> honest = check_replay(transition, observation);
      !honest || *honest != Outcome::kContinue)
    return honest;
  ++report_.transitions;
  count_coverage(report_, alphabet_size_, transition.action.action,
                 observation);
  std::optional<std::string> violation;
  if (observation.fault) {
    violation = observation.fault->violation();
    record_edge(report_.graph, transition.from, transition.action,
                GraphEdge::Reached::kFault);
  } else {
    violation = property_.check(observation.before, observation.after);
    if (!violation)
      violation = property_.check_response(observation.received.back());
    if (!violation)
      violation = transition.path_violation;
    if (Result<void> added = add_or_merge(
            identity(observation.fingerprints.back(), transition.path),
            transition, observation);
        !added)
      return added.error();
  }
  if (!violation)
    return add_preempted(transition, observation);
  // The state after the step was reached once: bytes of it that are
  // volatile but not yet masked could fake the violation.
  if (options_.mask_volatile && !observation.fault) {
    Result<std::optional<executor::Observation>> again =
        twice_or_mask(transition.path);
    if (!again)
      return again.error();
    if (!*again)
      return Outcome::kRestart;
  }
  report_.verdict = Verdict::kViolated;
  report_.counterexample = transition.path;
  report_.counterexample_effects = observation.effects;
  report_.violation = std::move(*violation);
  if (observation.fault)
    report_.backtrace = observation.fault->backtrace;
  return Outcome::kViolated;
}

// Every run replays the path of a visited state; it must pass through the
// very states recorded for that path, or the search cannot be trusted.
Result<Outcome> Search::check_replay(const Transition &transition,
                                     const executor::Observation &observation) {
  const std::span<const PathStep> path = transition.path;
  if (observation.fault) {
    const executor::Fault &fault = *observation.fault;
    CMC_CHECK(fault.step < path.size(), "fault after the last step");
    if (fault.step + 1 != path.size())
      return Error{fmt::format(
          "nondeterminism: replaying actions [{}]: target {} during step "
          "{}, which ran without fault before",
          executor::describe_path(path), fault.describe(), fault.step + 1)};
  }
  const std::size_t states = observation.fault ? path.size() : path.size() + 1;
  CMC_CHECK(observation.fingerprints.size() == states,
            "executor returned one fingerprint per state");
  // An executor may not read every state of a path (kNotRead): only the
  // states it read are compared.
  const std::vector<Fingerprint> recorded =
      store_.fingerprints_along(transition.from);
  for (std::size_t k = 0; k < recorded.size(); ++k) {
    if (observation.fingerprints[k] == executor::kNotRead ||
        identity(observation.fingerprints[k], path.first(k)) == recorded[k])
      continue;
    // The run's own bytes of that state, where the observation has them.
    std::span<const std::byte> seen;
    if (k < observation.states.size())
      seen = observation.states[k];
    else if (k + 1 == path.size())
      seen = observation.before;
    else if (k == path.size() && !observation.fault)
      seen = observation.after;
    std::vector<std::byte> bytes;
    if (options_.mask_volatile)
      bytes = recorded_.bytes_of(*store_.find(recorded[k]));
    return diagnose(path.first(k), seen, bytes);
  }
  return Outcome::kContinue;
}

Result<Outcome> Search::diagnose(std::span<const PathStep> prefix,
                                 std::span<const std::byte> seen,
                                 std::span<const std::byte> recorded) {
  Result<std::optional<executor::Observation>> replay = twice_or_mask(prefix);
  if (!replay)
    return replay.error();
  if (!*replay)
    return Outcome::kRestart;
  // Two more runs may agree on bytes that still differ from an earlier run
  // (a pid's second byte changes only now and then).
  const std::vector<std::byte> &again = (*replay)->after;
  for (const std::span<const std::byte> earlier : {seen, recorded}) {
    if (earlier.size() != again.size() ||
        std::equal(earlier.begin(), earlier.end(), again.begin()))
      continue;
    if (options_.mask_volatile) {
      CMC_CHECK(add_to_mask({differing_offsets(earlier, again), {}}),
                "bytes that differ were masked already");
      return Outcome::kRestart;
    }
    return Error{fmt::format("nondeterminism: {} differs between two runs at "
                             "{}; --mask-volatile masks such bytes and lists "
                             "them",
                             describe_state_after(prefix),
                             describe_differences(earlier, again, layout_))};
  }
  if (!(*replay)->images.empty()) {
    Result<std::optional<Outcome>> named =
        more_runs(prefix, (*replay)->images.back());
    if (!named)
      return named.error();
    if (*named)
      return **named;
    named = other_worker(prefix, (*replay)->images.back());
    if (!named)
      return named.error();
    if (*named)
      return **named;
  }
  return Error{fmt::format(
      "nondeterminism: {} had another fingerprint in an earlier run, but "
      "{} more runs agreed on every byte of it",
      describe_state_after(prefix),
      (*replay)->images.empty() ? 2 : 2 + kMoreRuns)};
}

Result<std::optional<Outcome>>
Search::more_runs(std::span<const PathStep> prefix,
                  const decoder::CanonicalState &image) {
  for (std::size_t run = 0; run < kMoreRuns; ++run) {
    Result<executor::Observation> again = probe_->run(prefix);
    if (!again)
      return again.error();
    if (again->fault || again->images.empty())
      return std::optional<Outcome>();
    std::vector<decoder::Location> differing =
        decoder::differences(image, again->images.back());
    if (differing.empty())
      continue;
    if (options_.mask_volatile && add_to_mask({{}, differing}))
      return std::optional<Outcome>(Outcome::kRestart);
    return Error{fmt::format("nondeterminism: {} differs between runs at {} "
                             "(now and then); --mask-volatile masks such "
                             "bytes and lists them",
                             describe_state_after(prefix),
                             describe_locations(differing))};
  }
  return std::optional<Outcome>();
}

Result<std::optional<Outcome>>
Search::other_worker(std::span<const PathStep> prefix,
                     const decoder::CanonicalState &image) {
  std::unique_ptr<executor::Executor> other = make_executor();
  other->keep_images();
  other->replay_only();
  Result<executor::Observation> again = other->run(prefix);
  if (!again)
    return again.error();
  if (again->fault || again->images.empty())
    return std::optional<Outcome>();
  std::vector<decoder::Location> differing =
      decoder::differences(image, again->images.back());
  if (differing.empty())
    return std::optional<Outcome>();
  if (options_.mask_volatile && add_to_mask({{}, differing}))
    return std::optional<Outcome>(Outcome::kRestart);
  return Error{fmt::format(
      "nondeterminism: {} differs between workers at {} (each runs its "
      "targets in a network namespace of its own); --mask-volatile masks "
      "such bytes and lists them",
      describe_state_after(prefix), describe_locations(differing))};
}

// replay_twice on the probe. With mask_volatile, region bytes that differ
// between the two runs are masked, and the result is empty: the search must
// start again.
Result<std::optional<executor::Observation>>
Search::twice_or_mask(std::span<const PathStep> prefix) {
  Differing differing;
  Result<executor::Observation> replay =
      replay_twice(*probe_, prefix, layout_, &differing);
  if (replay)
    return std::optional<executor::Observation>(std::move(*replay));
  if (differing.empty())
    return replay.error();
  if (!options_.mask_volatile)
    return Error{replay.error().message +
                 "; --mask-volatile masks such bytes and lists them"};
  if (!add_to_mask(differing))
    return Error{replay.error().message +
                 " (bytes masked already: they are named differently in "
                 "each run)"};
  return std::optional<executor::Observation>();
}

template <typename T, typename Less = std::less<>>
bool insert_sorted(std::vector<T> &into, const T &item, Less less = {}) {
  const auto at = std::lower_bound(into.begin(), into.end(), item, less);
  if (at != into.end() && *at == item)
    return false;
  into.insert(at, item);
  return true;
}

// Locations by piece, then offset: their own order, spelled out, since
// clang-tidy 14 reads the 0 in the expansion of Location's defaulted <=>
// as a null pointer (modernize-use-nullptr) wherever it is instantiated.
bool by_place(const decoder::Location &a, const decoder::Location &b) {
  return std::tie(a.piece, a.offset) < std::tie(b.piece, b.offset);
}

bool Search::add_to_mask(const Differing &differing) {
  bool grew = false;
  for (const std::size_t offset : differing.offsets) {
    CMC_CHECK(insert_sorted(mask_, offset), "a masked byte differed");
    grew = true;
  }
  // A masked location reads as zero, but what a location names (a chunk's
  // number) may shift between runs: one already masked is not an error.
  for (const decoder::Location &location : differing.locations)
    grew = insert_sorted(process_mask_, location, by_place) || grew;
  if (!grew)
    return false;
  report_.masked.clear();
  for (const std::size_t offset : mask_)
    report_.masked.push_back(name_offset(offset, layout_));
  for (const decoder::Location &location : process_mask_)
    report_.masked.push_back(location.describe());
  set_masks(*probe_);
  if (auditor_)
    set_masks(*auditor_);
  for (std::unique_ptr<executor::Executor> &executor : executors_)
    set_masks(*executor);
  CMC_LOG_INFO("search", "masked volatile bytes {}; starting again",
               fmt::join(report_.masked, ", "));
  return true;
}

void Search::set_masks(executor::Executor &executor) const {
  executor.set_mask(mask_);
  executor.set_process_mask(process_mask_);
}

Result<Outcome>
Search::check_restore(std::span<const PathStep> path,
                      const executor::Observation &observation) {
  ++report_.snapshots.checked;
  Result<executor::Observation> replay = probe_->run(path);
  if (!replay)
    return replay.error();
  if (restore_differs(observation, *replay, layout_).empty())
    return Outcome::kContinue;
  // Bytes that differ between two replays are volatile, as in replay
  // mode: named, or masked with mask_volatile.
  Result<std::optional<executor::Observation>> twice = twice_or_mask(path);
  if (!twice)
    return twice.error();
  if (!*twice)
    return Outcome::kRestart;
  const std::string differs = restore_differs(observation, **twice, layout_);
  if (differs.empty())
    return Outcome::kContinue;
  return Error{fmt::format("nondeterminism: {} differs between a run "
                           "restored from a snapshot and two replays that "
                           "agree, at {}",
                           describe_state_after(path), differs)};
}

std::optional<Fingerprint>
Search::audited_process(const executor::Observation &observation) const {
  return options_.audit ? observation.process_after : std::nullopt;
}

Result<void> Search::add_or_merge(const Fingerprint &fingerprint,
                                  const Transition &from,
                                  const executor::Observation &observation) {
  if (const std::optional<std::uint32_t> index = store_.find(fingerprint)) {
    ++report_.dedup_merges;
    record_edge(report_.graph, from.from, from.action,
                GraphEdge::Reached::kMerged, *index);
    return audit_merge(*index, from, observation);
  }
  if (store_.size() >= state_limit_) {
    report_.complete = false;
    record_edge(report_.graph, from.from, from.action,
                GraphEdge::Reached::kNotKept);
    return {};
  }
  const std::uint32_t index = store_.add(fingerprint, from.from, from.action,
                                         audited_process(observation));
  record_edge(report_.graph, from.from, from.action, GraphEdge::Reached::kNew,
              index);
  record_state(report_.graph, observation, options_.state);
  if (options_.mask_volatile)
    recorded_.add(observation.after);
  if (!observation.heap.allocator.empty())
    report_.heap = observation.heap;
  report_.distinct_states = store_.size();
  report_.max_depth = depth_ + 1;
  return {};
}

// A merge is audited when both states' whole processes were read; it is
// lossy when they differ: the search then never looks past the path merged.
Result<void> Search::audit_merge(std::uint32_t index, const Transition &from,
                                 const executor::Observation &observation) {
  const std::optional<Fingerprint> kept = store_.process_of(index);
  const std::optional<Fingerprint> merged = audited_process(observation);
  if (!kept || !merged)
    return {};
  Abstraction &abstraction = *report_.abstraction;
  ++abstraction.merges;
  if (*kept == *merged)
    return {};
  ++abstraction.lossy_merges;
  if (abstraction.named == kLossyMergesNamed)
    return {};
  LossyMerge merge{store_.path_of(index), from.path, ""};
  if (!auditor_) {
    auditor_ = make_executor();
    auditor_->keep_images();
  }
  Result<MergeDifference> difference =
      name_lossy_merge(*auditor_, merge.kept, merge.merged);
  if (!difference)
    return difference.error();
  ++abstraction.named;
  for (const std::string &place : difference->places)
    ++abstraction.places[place];
  if (!abstraction.first) {
    merge.difference = std::move(difference->text);
    abstraction.first = std::move(merge);
  }
  return {};
}

} // namespace

Result<Report> breadth_first(const ExecutorFactory &factory,
                             std::size_t alphabet_size,
                             const Property &property,
                             const std::vector<RegionLayout> &layout,
                             const Options &options) {
  constexpr std::size_t kMaxAlphabet =
      std::size_t{std::numeric_limits<ActionId>::max()} + 1;
  if (alphabet_size > kMaxAlphabet)
    return Error{fmt::format("{} steps to try at each state; at most {} are "
                             "supported",
                             alphabet_size, kMaxAlphabet)};
  Search search(factory, alphabet_size, property, layout, options);
  return search.run();
}

} // namespace cmc::search
