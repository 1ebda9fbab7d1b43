#include "search/random_walk.h"

#include <fmt/format.h>
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
#include <limits>
#include <mutex>
#include <random>
#include <unordered_set>

#include "search/nondeterminism.h"
#include "search/path_rules.h"
#include "search/report_counts.h"
#include "util/check.h"
#include "util/log.h"

namespace cmc::search {
namespace {

using Clock = std::chrono::steady_clock;
using executor::ActionId;
using executor::Observation;
using executor::PathStep;

double elapsed_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The violation of step i of path as the search judges a transition: a
// fault during it, the regions before -> after it, its responses, then
// (needs_path) the whole path up to it. The states around it are the
// run's kept states (Executor::keep_states), else its last step's.
std::optional<std::string> step_violation(const Property &property,
                                          std::span<const PathStep> path,
                                          const Observation &observation,
                                          std::size_t i) {
  if (observation.fault && observation.fault->step == i)
    return observation.fault->violation();
  const bool kept = observation.states.size() > i + 1;
  CMC_CHECK(kept || i + 1 == path.size(), "executor kept every state");
  const std::span<const std::byte> before =
      kept ? std::span(observation.states[i]) : std::span(observation.before);
  const std::span<const std::byte> after =
      kept ? std::span(observation.states[i + 1])
           : std::span(observation.after);
  if (auto violation = property.check(before, after))
    return violation;
  if (auto violation = property.check_response(observation.received.at(i)))
    return violation;
  if (!property.needs_path())
    return std::nullopt;
  CMC_CHECK(kept, "executor kept every state");
  return property.check_path({path.first(i + 1),
                              std::span(observation.states).first(i + 2),
                              std::span(observation.received).first(i + 1)});
}

// A whole number drawn uniformly from [0, count): the high word of
// draw * count, the same on every standard library (whose
// uniform_int_distribution may differ).
std::size_t draw_below(std::mt19937_64 &random, std::size_t count) {
  const unsigned __int128 wide =
      static_cast<unsigned __int128>(random()) * count;
  return static_cast<std::size_t>(wide >> 64U);
}

// What one walk did, for the merge in walk order.
struct Walk {
  std::vector<PathStep> path;
  // Each step's run, its state bytes dropped (but for a restored run the
  // search checks against a replay), and the state it reached, as the
  // search identifies it.
  std::vector<Observation> runs;
  std::vector<Fingerprint> reached;
  std::optional<Failure> failure;
  // A run of the path's first k steps passed through another state after
  // them than the run before: k.
  std::optional<std::size_t> differed_after;
  std::optional<Error> error;
};

class Walker {
public:
  Walker(const ExecutorFactory &factory, std::size_t alphabet_size,
         const Property &property, const std::vector<RegionLayout> &layout,
         const WalkOptions &options);
  Result<WalkReport> run();

private:
  std::unique_ptr<executor::Executor> make_executor();
  [[nodiscard]] std::vector<ActionId>
  enabled(std::span<const PathStep> path) const;
  void walk(std::size_t number, Walk &walk, executor::Executor &executor);
  // Takes one more step of walk; false when the walk ends there.
  bool step(Walk &walk, executor::Executor &executor, std::mt19937_64 &random);
  // Counts walk into the report; true when it ends the walks (a
  // violation).
  Result<bool> merge(std::size_t number, Walk &walk);
  Result<void> check_runs(const Walk &walk);
  void progress(std::size_t walks);
  Result<WalkReport> finish(std::optional<Error> error);

  const ExecutorFactory &factory_;
  const std::size_t alphabet_size_;
  const Property &property_;
  const std::vector<RegionLayout> &layout_;
  const WalkOptions &options_;
  const Clock::time_point start_ = Clock::now();
  std::mutex factory_mutex_;
  const int concurrency_;
  tbb::global_control parallelism_;
  tbb::task_arena arena_;
  tbb::enumerable_thread_specific<std::unique_ptr<executor::Executor>>
      executors_;
  // Replays what the walks' runs must agree with; then minimises.
  std::unique_ptr<executor::Executor> probe_;
  Fingerprint initial_; // as the executors read it
  std::unordered_set<Fingerprint, FingerprintHash> seen_;
  WalkReport result_;
  Clock::time_point next_progress_ = start_ + std::chrono::seconds(1);
  Clock::time_point last_progress_ = start_;
  std::size_t last_distinct_ = 0;
};

Walker::Walker(const ExecutorFactory &factory, std::size_t alphabet_size,
               const Property &property,
               const std::vector<RegionLayout> &layout,
               const WalkOptions &options)
    : factory_(factory), alphabet_size_(alphabet_size), property_(property),
      layout_(layout), options_(options),
      concurrency_(options.search.jobs == 0
                       ? tbb::info::default_concurrency()
                       : static_cast<int>(options.search.jobs)),
      parallelism_(tbb::global_control::max_allowed_parallelism, concurrency_),
      arena_(concurrency_), executors_([this] { return make_executor(); }),
      probe_(make_executor()) {
  probe_->keep_states();
  probe_->replay_only();
}

std::unique_ptr<executor::Executor> Walker::make_executor() {
  const std::lock_guard lock(factory_mutex_);
  std::unique_ptr<executor::Executor> executor = factory_();
  CMC_CHECK(executor != nullptr, "executor factory returned nothing");
  if (property_.needs_path())
    executor->keep_states();
  return executor;
}

std::vector<ActionId> Walker::enabled(std::span<const PathStep> path) const {
  const Options &search = options_.search;
  const bool ticks_left = ticks_in(path, search.tick) < search.max_ticks;
  std::vector<ActionId> actions;
  for (std::size_t action = 0; action < alphabet_size_; ++action) {
    const auto id = static_cast<ActionId>(action);
    if (taken_before(path, id, search.once_actions) ||
        (search.tick == id && !ticks_left))
      continue;
    actions.push_back(id);
  }
  return actions;
}

void Walker::walk(std::size_t number, Walk &walk,
                  executor::Executor &executor) {
  std::seed_seq seeds{static_cast<std::uint32_t>(options_.seed),
                      static_cast<std::uint32_t>(options_.seed >> 32U),
                      static_cast<std::uint32_t>(number),
                      static_cast<std::uint32_t>(number >> 32U)};
  std::mt19937_64 random(seeds);
  while (walk.path.size() < options_.depth && step(walk, executor, random)) {
  }
}

bool Walker::step(Walk &walk, executor::Executor &executor,
                  std::mt19937_64 &random) {
  const std::vector<ActionId> actions = enabled(walk.path);
  if (actions.empty())
    return false;
  walk.path.emplace_back(actions[draw_below(random, actions.size())]);
  Result<Observation> result = executor.run(walk.path);
  if (!result) {
    walk.error = result.error();
    return false;
  }
  Observation &observation = *result;
  const std::size_t last = walk.path.size() - 1;
  if (observation.fault && observation.fault->step != last) {
    walk.error = Error{fmt::format(
        "nondeterminism: replaying actions [{}]: target {} during step {}, "
        "which ran without fault before",
        executor::describe_path(walk.path), observation.fault->describe(),
        observation.fault->step + 1)};
    return false;
  }
  const Fingerprint before = observation.fingerprints.at(last);
  const Fingerprint expected =
      walk.runs.empty() ? initial_ : walk.runs.back().fingerprints.back();
  if (before != executor::kNotRead && expected != executor::kNotRead &&
      before != expected)
    walk.differed_after = last;
  if (auto violation = step_violation(property_, walk.path, observation, last))
    walk.failure =
        Failure{walk.path, std::move(*violation), observation.effects,
                observation.fault ? observation.fault->backtrace
                                  : std::vector<executor::Frame>{}};
  else
    walk.reached.push_back(
        state_identity(observation.fingerprints.back(), walk.path,
                       options_.search.once_actions, options_.search.state));
  observation.states = {};
  observation.images = {};
  if (!observation.check_restore) {
    observation.before = {};
    observation.after = {};
  }
  walk.runs.push_back(std::move(observation));
  return !walk.failure && !walk.differed_after;
}

// A walk's runs as the search checks its own: a run restored from a
// snapshot against a replay, a state reached twice against two more runs.
Result<void> Walker::check_runs(const Walk &walk) {
  if (walk.differed_after) {
    const std::span<const PathStep> prefix =
        std::span(walk.path).first(*walk.differed_after);
    Result<Observation> twice = replay_twice(*probe_, prefix, layout_);
    if (!twice)
      return twice.error();
    return Error{fmt::format("nondeterminism: {} had another fingerprint in "
                             "an earlier run, but 2 more runs agreed on every "
                             "byte of it",
                             describe_state_after(prefix))};
  }
  for (std::size_t i = 0; i < walk.runs.size(); ++i) {
    if (!walk.runs[i].check_restore)
      continue;
    ++result_.report.snapshots.checked;
    const std::span<const PathStep> path = std::span(walk.path).first(i + 1);
    Result<Observation> replay = probe_->run(path);
    if (!replay)
      return replay.error();
    if (const std::string differs =
            restore_differs(walk.runs[i], *replay, layout_);
        !differs.empty())
      return Error{fmt::format("nondeterminism: {} differs between a run "
                               "restored from a snapshot and a replay, at {}",
                               describe_state_after(path), differs)};
  }
  return {};
}

Result<bool> Walker::merge(std::size_t number, Walk &walk) {
  if (walk.error)
    return *walk.error;
  if (Result<void> checked = check_runs(walk); !checked)
    return checked.error();
  Report &report = result_.report;
  for (std::size_t i = 0; i < walk.runs.size(); ++i) {
    count_run(report, walk.runs[i]);
    count_coverage(report, alphabet_size_, walk.path[i].action, walk.runs[i]);
    ++report.transitions;
    if (i >= walk.reached.size())
      continue;
    if (seen_.insert(walk.reached[i]).second)
      report.max_depth = std::max(report.max_depth, i + 1);
    else
      ++report.dedup_merges;
    if (!walk.runs[i].heap.allocator.empty())
      report.heap = walk.runs[i].heap;
  }
  report.distinct_states = seen_.size();
  ++result_.walks;
  result_.steps += walk.path.size();
  if (!walk.failure)
    return false;
  result_.violating_walk = number;
  result_.found = walk.failure->path;
  CMC_LOG_INFO("search", "walk {} violated at step {}", number,
               walk.path.size());
  Result<Failure> minimised =
      minimise(*probe_, property_, *walk.failure, &result_.minimise_runs,
               options_.search.stop_requested);
  if (!minimised)
    return minimised.error();
  report.verdict = Verdict::kViolated;
  report.counterexample = std::move(minimised->path);
  report.counterexample_effects = std::move(minimised->effects);
  report.violation = std::move(minimised->violation);
  report.backtrace = std::move(minimised->backtrace);
  return true;
}

// A progress line about once a second, as the search's (ProgressMeter).
void Walker::progress(std::size_t walks) {
  const Clock::time_point now = Clock::now();
  if (!options_.search.progress || now < next_progress_)
    return;
  next_progress_ = now + std::chrono::seconds(1);
  const Report &report = result_.report;
  const double interval =
      std::chrono::duration<double>(now - last_progress_).count();
  fmt::print(
      stderr,
      "cmc: progress {:.1f} s: walk {} of {}, {} steps, {} distinct "
      "states, {} merges; {:.0f} states/s now, {:.0f} states/s "
      "overall\n",
      elapsed_since(start_), walks, options_.runs, result_.steps,
      report.distinct_states, report.dedup_merges,
      static_cast<double>(report.distinct_states - last_distinct_) / interval,
      static_cast<double>(report.distinct_states) / elapsed_since(start_));
  last_progress_ = now;
  last_distinct_ = report.distinct_states;
}

Result<WalkReport> Walker::finish(std::optional<Error> error) {
  if (error) {
    const bool requested =
        options_.search.stop_requested && options_.search.stop_requested();
    if (!error->interrupted() && !requested)
      return *error;
    result_.report.interrupted = true;
  }
  result_.report.complete = false;
  result_.report.elapsed_s = elapsed_since(start_);
  return std::move(result_);
}

Result<WalkReport> Walker::run() {
  Result<Observation> initial = replay_twice(*probe_, {}, layout_);
  if (!initial)
    return finish(initial.error());
  count_run(result_.report, *initial);
  initial_ = initial->fingerprints.back();
  result_.report.heap = initial->heap;
  seen_.insert(state_identity(initial->fingerprints.back(), {},
                              options_.search.once_actions,
                              options_.search.state));
  result_.report.distinct_states = 1;
  const auto batch_size = 2 * static_cast<std::size_t>(concurrency_);
  for (std::size_t first = 0; first < options_.runs; first += batch_size) {
    std::vector<Walk> batch(std::min(batch_size, options_.runs - first));
    arena_.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, batch.size(), 1),
          [&](const tbb::blocked_range<std::size_t> &range) {
            for (std::size_t i = range.begin(); i != range.end(); ++i)
              walk(first + i, batch[i], *executors_.local());
          },
          tbb::simple_partitioner());
    });
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Result<bool> violated = merge(first + i, batch[i]);
      if (!violated)
        return finish(violated.error());
      if (*violated)
        return finish(std::nullopt);
    }
    progress(first + batch.size());
  }
  return finish(std::nullopt);
}

} // namespace

Result<std::optional<Failure>> first_failure(executor::Executor &executor,
                                             const Property &property,
                                             std::span<const PathStep> path) {
  Result<Observation> result = executor.run(path);
  if (!result)
    return result.error();
  const Observation &observation = *result;
  const std::size_t steps =
      observation.fault ? observation.fault->step + 1 : path.size();
  for (std::size_t i = 0; i < steps; ++i) {
    const bool faulted = observation.fault && i + 1 == steps;
    std::optional<std::string> violation =
        step_violation(property, path, observation, i);
    if (!violation)
      continue;
    Failure failure{
        std::vector<PathStep>(
            path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i + 1)),
        std::move(*violation),
        {},
        faulted ? observation.fault->backtrace
                : std::vector<executor::Frame>{}};
    const auto effects = std::min(i + 1, observation.effects.size());
    failure.effects.assign(observation.effects.begin(),
                           observation.effects.begin() +
                               static_cast<std::ptrdiff_t>(effects));
    return std::optional<Failure>(std::move(failure));
  }
  return std::optional<Failure>();
}

Result<Failure> minimise(executor::Executor &executor, const Property &property,
                         Failure failing, std::size_t *runs,
                         const std::function<bool()> &stop_requested) {
  bool dropped = true;
  while (dropped && failing.path.size() > 1) {
    dropped = false;
    std::size_t i = 0;
    while (i < failing.path.size() && failing.path.size() > 1) {
      if (stop_requested && stop_requested())
        return failing;
      std::vector<PathStep> candidate = failing.path;
      candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(i));
      ++*runs;
      Result<std::optional<Failure>> failure =
          first_failure(executor, property, candidate);
      if (!failure)
        return failure.error();
      if (!*failure) {
        ++i;
        continue;
      }
      failing = std::move(**failure);
      dropped = true;
    }
  }
  return failing;
}

Result<WalkReport> random_walks(const ExecutorFactory &factory,
                                std::size_t alphabet_size,
                                const Property &property,
                                const std::vector<RegionLayout> &layout,
                                const WalkOptions &options) {
  CMC_CHECK(alphabet_size <=
                std::size_t{std::numeric_limits<ActionId>::max()} + 1,
            "alphabet fits ActionId");
  Walker walker(factory, alphabet_size, property, layout, options);
  return walker.run();
}

} // namespace cmc::search
