// What reading a whole quiescent process costs against a transition: a
// capture (tracer/process_capture.h) plus its canonical hash, of Debian's
// beanstalkd after two puts and of demo kv after two SETs, and one replay
// of the same path as the search runs per transition. Also the parts of
// the soft-dirty alternative: clearing the bits, a step with them clear
// (each first write to a page then faults), the pages a step dirties.
// Run: build/bench/cmc_bench --benchmark_filter='Capture|Transition|Soft'

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "decoder/canonical_state.h"
#include "decoder/elf_file.h"
#include "tracer/network_namespace.h"
#include "tracer/process_capture.h"
#include "tracer/process_executor.h"
#include "tracer/target_run.h"
#include "util/unique_fd.h"

namespace {

using cmc::tracer::ActionId;
using cmc::tracer::StateKind;

std::string here() {
  std::array<char, 4096> path{};
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  const std::string self(path.data(),
                         static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
  return self.substr(0, self.rfind('/'));
}

// Index 0: beanstalkd with two puts; 1: demo kv with SET a, SET b.
std::shared_ptr<cmc::tracer::TargetSpec> spec_of(std::int64_t target,
                                                 StateKind state) {
  auto spec = std::make_shared<cmc::tracer::TargetSpec>();
  if (target == 0) {
    spec->launch.program = "/usr/bin/beanstalkd";
    spec->launch.argv = {spec->launch.program, "-l", "127.0.0.1", "-p",
                         "11300"};
    spec->messages = {"put 0 0 10 1\r\nx\r\n", "put 0 0 10 1\r\ny\r\n"};
  } else {
    spec->launch.program = here() + "/../demo/kv";
    spec->launch.argv = {spec->launch.program, "7000"};
    spec->messages = {"SET a\n", "SET b\n"};
  }
  auto elf = cmc::decoder::ElfFile::open(spec->launch.program);
  if (elf) {
    spec->load_base = elf->load_base();
    spec->entry = elf->entry();
  }
  spec->state = state;
  return spec;
}

const std::vector<ActionId> kPath{0, 1};

// A target run to the end of kPath, in a network namespace of its own.
struct Started {
  std::optional<cmc::tracer::NetworkNamespace> netns;
  std::shared_ptr<cmc::tracer::TargetSpec> spec;
  std::optional<cmc::tracer::TargetRun> run;
};

cmc::Result<void> start(Started &started, std::int64_t target) {
  started.spec = spec_of(target, StateKind::kProcess);
  auto netns = cmc::tracer::NetworkNamespace::create();
  if (!netns)
    return netns.error();
  started.netns.emplace(std::move(*netns));
  cmc::tracer::LaunchSpec launch = started.spec->launch;
  launch.netns = started.netns->fd();
  bool located = false;
  auto run = cmc::tracer::TargetRun::start(*started.spec, launch, located);
  if (!run)
    return run.error();
  started.run.emplace(std::move(*run));
  for (const ActionId action : kPath) {
    auto fault = started.run->step(action);
    if (!fault)
      return fault.error();
    if (*fault)
      return cmc::Error{(*fault)->describe()};
  }
  return {};
}

const char *label(std::int64_t target) {
  return target == 0 ? "beanstalkd" : "kv";
}

// One capture and canonical hash of the quiescent target, as the executor
// makes for the last state of a path and the one before it.
void BM_Capture(benchmark::State &state) {
  state.SetLabel(label(state.range(0)));
  cmc::tracer::pin_this_thread();
  Started started;
  if (auto ok = start(started, state.range(0)); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  cmc::tracer::ProcessCapture capture;
  cmc::decoder::CanonicalState canonical;
  std::size_t read = 0;
  for (auto _ : state) {
    auto image = started.run->read_process(capture);
    if (!image)
      return state.SkipWithError(image.error().message.c_str());
    read = image->bytes_read;
    canonical = cmc::decoder::canonicalize(*image, {});
  }
  state.counters["bytes_read"] = static_cast<double>(read);
  state.counters["bytes_hashed"] = static_cast<double>(canonical.bytes_hashed);
  state.counters["chunks"] = static_cast<double>(canonical.heap.chunks);
}
BENCHMARK(BM_Capture)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The capture alone, without the hash.
void BM_CaptureRead(benchmark::State &state) {
  state.SetLabel(label(state.range(0)));
  cmc::tracer::pin_this_thread();
  Started started;
  if (auto ok = start(started, state.range(0)); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  cmc::tracer::ProcessCapture capture;
  for (auto _ : state)
    if (auto image = started.run->read_process(capture); !image)
      return state.SkipWithError(image.error().message.c_str());
}
BENCHMARK(BM_CaptureRead)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// One transition as the search runs it: a fresh target replays kPath.
// /N/0: the state is the regions (none here: today's cost without the
// whole process); /N/1: the whole process (two captures per replay).
void BM_Transition(benchmark::State &state) {
  state.SetLabel(label(state.range(0)));
  cmc::tracer::pin_this_thread();
  cmc::tracer::ProcessExecutor executor(
      spec_of(state.range(0),
              state.range(1) != 0 ? StateKind::kProcess : StateKind::kRegions));
  for (auto _ : state)
    if (auto seen = executor.run(kPath); !seen)
      return state.SkipWithError(seen.error().message.c_str());
}
BENCHMARK(BM_Transition)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Writes "4" to /proc/PID/clear_refs: the soft-dirty bits (bit 55 of a
// pagemap entry) clear, and the kernel write-protects the pages so that
// the next write to each sets its bit again, through a fault.
bool clear_soft_dirty(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/clear_refs";
  const cmc::UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd.valid() && write(fd.get(), "4", 1) == 1;
}

// The pages of the process whose soft-dirty bit is set.
std::size_t soft_dirty_pages(const cmc::tracer::Tracee &tracee) {
  constexpr std::uint64_t kSoftDirty = 1ULL << 55;
  const std::string path = "/proc/" + std::to_string(tracee.pid()) + "/pagemap";
  const cmc::UniqueFd pagemap(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto maps = tracee.maps();
  std::size_t dirty = 0;
  if (!maps || !pagemap.valid())
    return 0;
  for (const cmc::decoder::Mapping &mapping : *maps) {
    if (mapping.perms[1] != 'w')
      continue;
    std::vector<std::uint64_t> entries((mapping.end - mapping.start) / 4096);
    const auto size = static_cast<ssize_t>(entries.size() * 8);
    if (pread(pagemap.get(), entries.data(), static_cast<std::size_t>(size),
              static_cast<off_t>(mapping.start / 4096 * 8)) != size)
      return 0;
    for (const std::uint64_t entry : entries)
      dirty += (entry & kSoftDirty) != 0 ? 1 : 0;
  }
  return dirty;
}

// One more put (SET) on the quiescent target; /N/1 clears the soft-dirty
// bits before it, as tracking the pages a step writes would.
void BM_SoftDirtyStep(benchmark::State &state) {
  state.SetLabel(label(state.range(0)));
  const bool clear = state.range(1) != 0;
  cmc::tracer::pin_this_thread();
  Started started;
  if (auto ok = start(started, state.range(0)); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  const pid_t pid = started.run->tracee().pid();
  std::size_t dirty = 0;
  for (auto _ : state) {
    state.PauseTiming();
    if (clear && !clear_soft_dirty(pid))
      return state.SkipWithError("cannot write clear_refs");
    state.ResumeTiming();
    auto fault = started.run->step(0);
    if (!fault || *fault)
      return state.SkipWithError("the step failed");
    state.PauseTiming();
    static_cast<void>(started.run->drain());
    if (clear)
      dirty = soft_dirty_pages(started.run->tracee());
    state.ResumeTiming();
  }
  state.counters["dirty_pages"] = static_cast<double>(dirty);
}
BENCHMARK(BM_SoftDirtyStep)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Clearing the soft-dirty bits of the quiescent target.
void BM_SoftDirtyClear(benchmark::State &state) {
  state.SetLabel(label(state.range(0)));
  cmc::tracer::pin_this_thread();
  Started started;
  if (auto ok = start(started, state.range(0)); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  const pid_t pid = started.run->tracee().pid();
  for (auto _ : state)
    if (!clear_soft_dirty(pid))
      return state.SkipWithError("cannot write clear_refs");
}
BENCHMARK(BM_SoftDirtyClear)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

} // namespace
