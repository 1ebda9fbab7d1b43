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
#include <limits>
#include <mutex>
#include <optional>

#include "search/nondeterminism.h"
#include "search/state_store.h"
#include "util/check.h"
#include "util/log.h"

namespace cmc::search {
namespace {

using Clock = std::chrono::steady_clock;
using tracer::ActionId;

// Transitions per worker thread run between two merges. Large enough that
// the wait for the slowest run of a batch costs little, small enough that a
// violation stops the search soon and the observations held stay few.
constexpr std::size_t kBatchPerWorker = 256;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One (state, action) pair: the state is replayed and the action taken.
struct Transition {
  std::uint32_t from = 0;
  ActionId action = 0;
  std::vector<ActionId> path;
  std::optional<Result<tracer::Observation>> observation;
  bool beyond_ticks = false; // not run: its path takes too many ticks
};

enum class Outcome { kContinue, kViolated };

// Prints a progress line about once a second, from the first second on.
class ProgressMeter {
public:
  ProgressMeter(bool enabled, Clock::time_point start)
      : enabled_(enabled), start_(start),
        next_(start + std::chrono::seconds(1)) {}

  void update(const Report &report, std::size_t depth, std::size_t frontier) {
    if (!enabled_ || Clock::now() < next_)
      return;
    next_ = Clock::now() + std::chrono::seconds(1);
    const double elapsed = seconds_since(start_);
    fmt::print(stderr,
               "cmc: depth {}, {} distinct, {} merges, frontier {}, "
               "{:.0f} states/s, {:.0f} transitions/s\n",
               depth, report.distinct_states, report.dedup_merges, frontier,
               static_cast<double>(report.distinct_states) / elapsed,
               static_cast<double>(report.transitions) / elapsed);
  }

private:
  bool enabled_;
  Clock::time_point start_;
  Clock::time_point next_;
};

class Search {
public:
  Search(const ExecutorFactory &factory, std::size_t alphabet_size,
         const Property &property, const std::vector<RegionLayout> &layout,
         const Options &options);

  Result<Report> run();

private:
  std::unique_ptr<tracer::Executor> make_executor();
  Result<Outcome> expand_level(std::uint32_t begin, std::uint32_t end);
  // The partial report when the user stopped the search, else error.
  Result<Report> stopped_or(const Error &error);
  void run_batch(std::vector<Transition> &batch);
  Result<Outcome> merge(const Transition &transition);
  Result<void> check_replay(const Transition &transition,
                            const tracer::Observation &observation);
  Error diagnose(std::span<const ActionId> prefix);
  [[nodiscard]] bool beyond_ticks(std::span<const ActionId> path) const;
  void add_or_merge(const Fingerprint &fingerprint, const Transition &from);

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
  tbb::enumerable_thread_specific<std::unique_ptr<tracer::Executor>> executors_;
  std::unique_ptr<tracer::Executor> probe_; // initial check and diagnoses
  ProgressMeter progress_;

  StateStore store_;
  Report report_;
  std::size_t depth_ = 0; // of the states being expanded
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
      probe_(make_executor()), progress_(options.progress, start_) {}

std::unique_ptr<tracer::Executor> Search::make_executor() {
  const std::lock_guard lock(factory_mutex_);
  std::unique_ptr<tracer::Executor> executor = factory_();
  CMC_CHECK(executor != nullptr, "executor factory returned nothing");
  return executor;
}

Result<Report> Search::run() {
  Result<tracer::Observation> initial = replay_twice(*probe_, {}, layout_);
  if (!initial)
    return stopped_or(initial.error());
  report_.sources.merge(initial->sources);
  store_.add(initial->fingerprints.front(), StateStore::kNoParent, 0);
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
    if (!outcome)
      return stopped_or(outcome.error());
    if (*outcome == Outcome::kViolated)
      break;
    begin = end;
    ++depth_;
  }
  report_.elapsed_s = seconds_since(start_);
  return report_;
}

Result<Report> Search::stopped_or(const Error &error) {
  if (!options_.stop_requested || !options_.stop_requested())
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
    run_batch(batch);
    for (const Transition &transition : batch) {
      Result<Outcome> outcome = merge(transition);
      if (!outcome || *outcome == Outcome::kViolated)
        return outcome;
    }
    progress_.update(report_, depth_, end - begin);
  }
  return Outcome::kContinue;
}

// The store is only read here; merges happen after the batch has run.
void Search::run_batch(std::vector<Transition> &batch) {
  arena_.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, batch.size(), 1),
        [&](const tbb::blocked_range<std::size_t> &range) {
          tracer::Executor &executor = *executors_.local();
          for (std::size_t i = range.begin(); i != range.end(); ++i) {
            Transition &transition = batch[i];
            transition.path = store_.path_of(transition.from);
            transition.path.push_back(transition.action);
            if (beyond_ticks(transition.path)) {
              transition.beyond_ticks = true;
              continue;
            }
            transition.observation.emplace(executor.run(transition.path));
          }
        },
        tbb::simple_partitioner());
  });
}

bool Search::beyond_ticks(std::span<const ActionId> path) const {
  return options_.tick &&
         static_cast<std::size_t>(std::count(
             path.begin(), path.end(), *options_.tick)) > options_.max_ticks;
}

Result<Outcome> Search::merge(const Transition &transition) {
  if (transition.beyond_ticks) {
    report_.ticks_cut = true;
    report_.complete = false;
    return Outcome::kContinue;
  }
  const Result<tracer::Observation> &result = *transition.observation;
  if (!result)
    return result.error();
  const tracer::Observation &observation = *result;
  report_.sources.merge(observation.sources);
  if (Result<void> honest = check_replay(transition, observation); !honest)
    return honest.error();
  ++report_.transitions;
  std::optional<std::string> violation;
  if (observation.fault) {
    violation =
        fmt::format("target {} during step {}", observation.fault->describe(),
                    transition.path.size());
  } else {
    violation = property_.check(observation.before, observation.after);
    if (!violation)
      violation = property_.check_response(observation.response);
    add_or_merge(observation.fingerprints.back(), transition);
  }
  if (!violation)
    return Outcome::kContinue;
  report_.verdict = Verdict::kViolated;
  report_.counterexample = transition.path;
  report_.violation = std::move(*violation);
  return Outcome::kViolated;
}

// Every run replays the path of a visited state; it must pass through the
// very states recorded for that path, or the search cannot be trusted.
Result<void> Search::check_replay(const Transition &transition,
                                  const tracer::Observation &observation) {
  const std::span<const ActionId> path = transition.path;
  if (observation.fault) {
    const tracer::Fault &fault = *observation.fault;
    CMC_CHECK(fault.step < path.size(), "fault after the last step");
    if (fault.step + 1 != path.size())
      return Error{fmt::format(
          "nondeterminism: replaying actions [{}]: target {} during step "
          "{}, which ran without fault before",
          fmt::join(path, ", "), fault.describe(), fault.step + 1)};
  }
  const std::size_t states = observation.fault ? path.size() : path.size() + 1;
  CMC_CHECK(observation.fingerprints.size() == states,
            "executor returned one fingerprint per state");
  const std::vector<Fingerprint> recorded =
      store_.fingerprints_along(transition.from);
  for (std::size_t k = 0; k < recorded.size(); ++k)
    if (observation.fingerprints[k] != recorded[k])
      return diagnose(path.first(k));
  return {};
}

Error Search::diagnose(std::span<const ActionId> prefix) {
  Result<tracer::Observation> replay = replay_twice(*probe_, prefix, layout_);
  if (!replay)
    return replay.error();
  return Error{fmt::format(
      "nondeterminism: {} had another fingerprint in an earlier run, but "
      "two more runs agreed on every region byte",
      describe_state_after(prefix))};
}

void Search::add_or_merge(const Fingerprint &fingerprint,
                          const Transition &from) {
  if (store_.contains(fingerprint)) {
    ++report_.dedup_merges;
    return;
  }
  if (store_.size() >= state_limit_) {
    report_.complete = false;
    return;
  }
  store_.add(fingerprint, from.from, from.action);
  report_.distinct_states = store_.size();
  report_.max_depth = depth_ + 1;
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
