#include "tracer/process_executor.h"

#include <sched.h>

#include <atomic>

#include "tracer/watchdog.h"

namespace cmc::tracer {

ProcessExecutor::ProcessExecutor(std::shared_ptr<const TargetSpec> spec)
    : spec_(std::move(spec)) {}

Result<Observation> ProcessExecutor::run(std::span<const ActionId> path) {
  auto seen = replay(path);
  // An interrupt kills targets wherever they are, even before exec: that
  // is the reason for whatever went wrong.
  if (Watchdog::instance().interrupted())
    return Error{"interrupted"};
  return seen;
}

Result<Observation> ProcessExecutor::replay(std::span<const ActionId> path) {
  if (!netns_) {
    auto netns = NetworkNamespace::create();
    if (!netns)
      return netns.error();
    netns_ = std::move(*netns);
    launch_ = spec_->launch;
    launch_.netns = netns_->fd();
  }
  auto started = TargetRun::start(*spec_, launch_, located_);
  if (!started)
    return started.error();
  TargetRun &target = *started;
  Observation seen;
  Reading now;
  if (auto observed = observe(target, 0, path.size(), seen, now); !observed)
    return observed.error();
  for (std::size_t step = 0; step < path.size(); ++step) {
    seen.before = std::move(now.state);
    auto fault = target.step(path[step]);
    if (!fault)
      return fault.error();
    seen.received.push_back(target.drain());
    seen.effects.push_back(target.effects());
    if (!*fault) {
      auto observed = observe(target, step + 1, path.size(), seen, now);
      if (observed)
        continue;
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
    return seen;
  }
  seen.after = std::move(now.state);
  seen.files_after = std::move(now.files);
  seen.sources = target.session().environment().sources();
  return seen;
}

Result<void> ProcessExecutor::observe(const TargetRun &target,
                                      std::size_t taken, std::size_t steps,
                                      Observation &seen, Reading &now) {
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
    process = target.fingerprint(
        std::as_bytes(std::span(&canonical->fingerprint, 1)), now.files);
    if (keep_images_)
      seen.images.push_back(std::move(*canonical));
  }
  if (!keys_on_regions()) {
    seen.fingerprints.push_back(process.value_or(kNotRead));
  } else {
    seen.fingerprints.push_back(target.fingerprint(*state, now.files));
    if (spec_->audit && taken == steps)
      seen.process_after = process;
  }
  if (keep_states_)
    seen.states.push_back(*state);
  now.state = std::move(*state);
  return {};
}

bool ProcessExecutor::keys_on_regions() const {
  return spec_->state == StateKind::kRegions ||
         spec_->state == StateKind::kPath;
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
ProcessExecutor::read_process(const TargetRun &target, Observation &seen) {
  auto image = target.read_process(capture_);
  if (!image)
    return image.error();
  const decoder::CanonicalOptions options{spec_->state == StateKind::kRaw
                                              ? decoder::HeapModel::kRaw
                                              : decoder::HeapModel::kCanonical,
                                          keep_images_, process_mask_};
  decoder::CanonicalState canonical = decoder::canonicalize(*image, options);
  seen.heap = canonical.heap;
  seen.bytes_read = image->bytes_read;
  seen.bytes_hashed = canonical.bytes_hashed;
  return canonical;
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
