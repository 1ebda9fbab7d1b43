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
  auto state = read_state(target);
  if (!state)
    return state.error();
  auto files = target.read_files();
  if (!files)
    return files.error();
  seen.fingerprints.push_back(target.fingerprint(*state, *files));
  if (keep_states_)
    seen.states.push_back(*state);
  for (std::size_t step = 0; step < path.size(); ++step) {
    seen.before = std::move(*state);
    auto fault = target.step(path[step]);
    if (!fault)
      return fault.error();
    seen.received.push_back(target.drain());
    seen.effects.push_back(target.effects());
    if (*fault) {
      seen.fault = **fault;
      seen.fault->step = step;
      seen.sources = target.session().environment().sources();
      return seen;
    }
    state = read_state(target);
    if (!state)
      return state.error();
    files = target.read_files();
    if (!files)
      return files.error();
    seen.fingerprints.push_back(target.fingerprint(*state, *files));
    if (keep_states_)
      seen.states.push_back(*state);
  }
  seen.after = std::move(*state);
  seen.files_after = std::move(*files);
  seen.sources = target.session().environment().sources();
  return seen;
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
