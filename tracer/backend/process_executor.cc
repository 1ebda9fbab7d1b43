#include "tracer/backend/process_executor.h"

#include <sched.h>

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "decoder/state_changes.h"
#include "tracer/process/watchdog.h"

namespace cmc::tracer {

ProcessExecutor::ProcessExecutor(std::shared_ptr<const TargetSpec> spec)
    : spec_(std::move(spec)) {}

namespace {

// One restored run in this many is checked against a replay (and the
// first).
constexpr std::size_t kCheckEvery = 64;

// Adds the kept bytes of process number (from 1, in order of creation) to
// those of the first, its pieces named "process N: ...".
void append_process(decoder::CanonicalState &first,
                    decoder::CanonicalState other, std::size_t number) {
  for (decoder::StatePiece &piece : other.pieces) {
    piece.name = fmt::format("process {}: {}", number, piece.name);
    piece.offset += first.bytes.size();
    first.pieces.push_back(std::move(piece));
  }
  first.bytes.insert(first.bytes.end(), other.bytes.begin(), other.bytes.end());
}

} // namespace

Result<executor::Observation>
ProcessExecutor::run(std::span<const executor::PathStep> path) {
  auto seen = spec_->snapshots && !replay_only_ && !keep_images_ ? branch(path)
                                                                 : replay(path);
  // An interrupt kills targets wherever they are, even before exec: that
  // is the reason for whatever went wrong.
  if (Watchdog::instance().interrupted())
    return interrupted_error();
  return seen;
}

void ProcessExecutor::set_mask(std::span<const std::size_t> offsets) {
  mask_.assign(offsets.begin(), offsets.end());
  forget();
}

void ProcessExecutor::set_process_mask(
    std::span<const decoder::Location> mask) {
  process_mask_.assign(mask.begin(), mask.end());
  forget();
}

void ProcessExecutor::forget() {
  kept_.clear();
  kept_bytes_ = 0;
}

Result<TargetRun> ProcessExecutor::start() {
  if (!netns_) {
    auto netns = NetworkNamespace::create();
    if (!netns)
      return netns.error();
    netns_ = std::move(*netns);
    launch_ = spec_->launch;
    launch_.netns = netns_->fd();
    launch_.aside = replay_only_;
  }
  return TargetRun::start(*spec_, launch_, located_);
}

Result<executor::Observation>
ProcessExecutor::replay(std::span<const executor::PathStep> path) {
  auto started = start();
  if (!started)
    return started.error();
  executor::Observation seen;
  Reading now;
  if (auto observed = observe(*started, 0, path.size(), seen, now); !observed)
    return observed.error();
  return take_steps(*started, path, 0, std::move(seen), std::move(now), false);
}

Result<executor::Observation>
ProcessExecutor::branch(std::span<const executor::PathStep> path) {
  executor::Observation seen;
  Reading now;
  std::size_t taken = 0;
  bool restored = false;
  if (Kept *kept = longest_kept(path, taken)) {
    auto done = restore(*kept, path, taken, seen, now);
    if (!done)
      return done.error();
    restored = *done;
  }
  if (restored) {
    seen.check_restore = restores_++ % kCheckEvery == 0;
  } else {
    taken = 0;
    if (auto started = start_live(path, seen, now); !started)
      return started.error();
  }
  auto result =
      take_steps(*live_, path, taken, std::move(seen), std::move(now), true);
  if (!result || result->fault)
    live_.reset(); // gone, or in no state known
  return result;
}

ProcessExecutor::Kept *
ProcessExecutor::longest_kept(std::span<const executor::PathStep> path,
                              std::size_t &taken) {
  if (!live_)
    return nullptr;
  for (taken = path.size() + 1; taken-- > 0;) {
    const auto found = kept_.find(std::vector(
        path.begin(), path.begin() + static_cast<std::ptrdiff_t>(taken)));
    if (found != kept_.end())
      return &found->second;
  }
  return nullptr;
}

Result<void>
ProcessExecutor::start_live(std::span<const executor::PathStep> path,
                            executor::Observation &seen, Reading &now) {
  live_.reset();
  forget();
  executor::Observation fresh;
  fresh.refusals = std::move(seen.refusals);
  seen = std::move(fresh);
  auto started = start();
  if (!started)
    return started.error();
  live_.emplace(std::move(*started));
  if (auto observed = observe(*live_, 0, path.size(), seen, now); !observed)
    return observed.error();
  if (path.size() == 1)
    return keep(*live_, path, 0, seen);
  return {};
}

Result<bool> ProcessExecutor::restore(Kept &kept,
                                      std::span<const executor::PathStep> path,
                                      std::size_t taken,
                                      executor::Observation &seen,
                                      Reading &now) {
  auto refused = kept.snapshot.restore(*live_);
  if (!refused)
    return refused.error();
  if (!refused->empty()) {
    seen.refusals.push_back(std::move(*refused));
    return false;
  }
  kept.used = ++uses_;
  seen = kept.seen;
  seen.restored = true;
  if (auto observed = observe(*live_, taken, path.size(), seen, now); !observed)
    return observed.error();
  return true;
}

Result<executor::Observation> ProcessExecutor::take_steps(
    TargetRun &target, std::span<const executor::PathStep> path,
    std::size_t taken, executor::Observation seen, Reading now, bool keep) {
  for (std::size_t step = taken; step < path.size(); ++step) {
    seen.before = std::move(now.state);
    auto fault = target.step(path[step]);
    if (!fault)
      return fault.error();
    seen.received.push_back(target.drain());
    seen.effects.push_back(target.effects());
    if (!*fault) {
      auto observed = observe(target, step + 1, path.size(), seen, now);
      if (observed) {
        if (keep && step + 2 == path.size())
          if (auto kept = this->keep(target, path, step + 1, seen); !kept)
            return kept.error();
        continue;
      }
      if (!observed.error().target_gone())
        return observed.error();
      // The target was dying as the step ended: the step ended it.
      fault = target.gone();
      if (!fault)
        return observed.error(); // it was not: the read's own failure
    }
    seen.fault = **fault;
    seen.fault->step = step;
    seen.sources = target.session().environment().sources();
    seen.snapshot_bytes = kept_bytes_;
    seen.snapshots_kept = kept_.size();
    return seen;
  }
  seen.after = std::move(now.state);
  seen.files_after = std::move(now.files);
  seen.sources = target.session().environment().sources();
  seen.snapshot_bytes = kept_bytes_;
  seen.snapshots_kept = kept_.size();
  return seen;
}

Result<void> ProcessExecutor::keep(TargetRun &target,
                                   std::span<const executor::PathStep> path,
                                   std::size_t taken,
                                   executor::Observation &seen) {
  std::vector<executor::PathStep> prefix(
      path.begin(), path.begin() + static_cast<long>(taken));
  if (kept_.contains(prefix))
    return {};
  std::string refused;
  auto snapshot = Snapshot::save(target, refused);
  if (!snapshot)
    return snapshot.error();
  if (!*snapshot) {
    seen.refusals.push_back(std::move(refused));
    return {};
  }
  executor::Observation before = seen;
  before.fingerprints.pop_back();
  if (!before.states.empty())
    before.states.pop_back();
  before.refusals.clear();
  const std::size_t bytes = (*snapshot)->size();
  kept_bytes_ += bytes;
  kept_.emplace(std::move(prefix),
                Kept{std::move(**snapshot), std::move(before), bytes, ++uses_});
  evict();
  return {};
}

void ProcessExecutor::evict() {
  while (kept_bytes_ > spec_->snapshot_memory && !kept_.empty()) {
    const auto oldest = std::ranges::min_element(
        kept_, {}, [](const auto &entry) { return entry.second.used; });
    kept_bytes_ -= oldest->second.bytes;
    kept_.erase(oldest);
  }
}

Result<void> ProcessExecutor::observe(TargetRun &target, std::size_t taken,
                                      std::size_t steps,
                                      executor::Observation &seen,
                                      Reading &now) {
  auto state = read_state(target);
  if (!state)
    return state.error();
  const bool reads_process = this->reads_process(taken, steps);
  // A whole-process state not read has no fingerprint, so its files (a
  // digest of what the target wrote) are not read either.
  if (reads_process || keys_on_regions()) {
    auto files = target.read_files();
    if (!files)
      return files.error();
    now.files = std::move(*files);
  }
  std::optional<Fingerprint> process;
  if (reads_process) {
    auto canonical = read_process(target, seen);
    if (!canonical)
      return canonical.error();
    process = target.process_fingerprint(canonical->fingerprint, now.files);
    describe(taken, steps, *canonical, seen, now);
    if (keep_images_)
      seen.images.push_back(std::move(*canonical));
  }
  if (!keys_on_regions()) {
    seen.fingerprints.push_back(process.value_or(executor::kNotRead));
  } else {
    seen.fingerprints.push_back(target.fingerprint(*state, now.files));
    if (spec_->audit && taken == steps)
      seen.process_after = process;
  }
  if (keep_states_)
    seen.states.push_back(*state);
  now.state = std::move(*state);
  seen.threads = std::max(seen.threads, target.session().thread_count());
  seen.stops = target.session().stops();
  seen.scheduler_stops = target.session().scheduler_stops();
  return {};
}

bool ProcessExecutor::keys_on_regions() const {
  return spec_->state == executor::StateKind::kRegions ||
         spec_->state == executor::StateKind::kPath;
}

bool ProcessExecutor::reads_process(std::size_t taken,
                                    std::size_t steps) const {
  if (keep_images_)
    return true;
  if (keys_on_regions())
    return spec_->audit && taken == steps;
  return taken + 1 >= steps;
}

Result<decoder::CanonicalState>
ProcessExecutor::read_process(TargetRun &target, executor::Observation &seen) {
  auto images = target.read_processes(capture_);
  if (!images)
    return images.error();
  const decoder::CanonicalOptions options{
      spec_->state == executor::StateKind::kRaw
          ? decoder::HeapModel::kRaw
          : decoder::HeapModel::kCanonical,
      keep_images_ || describe_, process_mask_};
  decoder::CanonicalState canonical =
      decoder::canonicalize(images->front(), options);
  seen.heap = canonical.heap;
  seen.bytes_read = 0;
  seen.dead_register_bytes = 0;
  seen.dead_red_zone_bytes = 0;
  seen.dead_frame_bytes = 0;
  std::vector<Fingerprint> fingerprints{canonical.fingerprint};
  for (const decoder::ProcessImage &image : *images) {
    seen.bytes_read += image.bytes_read;
    seen.dead_register_bytes += image.dead_register_bytes;
    seen.dead_red_zone_bytes += image.dead_red_zone_bytes;
    seen.dead_frame_bytes += image.dead_frame_bytes;
    if (&image == &images->front())
      continue;
    decoder::CanonicalState other =
        decoder::canonicalize(image, {options.heap, options.keep_bytes, {}});
    fingerprints.push_back(other.fingerprint);
    canonical.bytes_hashed += other.bytes_hashed;
    append_process(canonical, std::move(other), fingerprints.size());
  }
  if (fingerprints.size() > 1)
    canonical.fingerprint =
        fingerprint_of(std::as_bytes(std::span(fingerprints)), 0);
  seen.bytes_hashed = canonical.bytes_hashed;
  return canonical;
}

void ProcessExecutor::describe(std::size_t taken, std::size_t steps,
                               const decoder::CanonicalState &canonical,
                               executor::Observation &seen,
                               Reading &now) const {
  if (!describe_ || keys_on_regions())
    return;
  if (taken == steps && taken > 0 && now.process)
    seen.changes = decoder::describe_changes(*now.process, canonical, 8);
  if (taken + 1 == steps)
    now.process = canonical;
  else
    now.process.reset();
}

Result<std::vector<std::byte>>
ProcessExecutor::read_state(const TargetRun &target) const {
  auto state = target.read_state();
  if (state)
    for (const std::size_t offset : mask_)
      if (offset < state->size())
        (*state)[offset] = std::byte{0};
  return state;
}

void pin_this_thread() {
  // The CPUs cmc may use, read once before any thread was pinned.
  static const std::vector<int> cpus = [] {
    std::vector<int> allowed_cpus;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed))
          allowed_cpus.push_back(cpu);
    return allowed_cpus;
  }();
  static std::atomic<unsigned> next{0};
  if (cpus.empty())
    return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[next.fetch_add(1) % cpus.size()], &one);
  sched_setaffinity(0, sizeof one, &one);
}

} // namespace cmc::tracer
