// What reading a whole quiescent process costs against a transition: a
// capture (tracer/capture/process_capture.h) plus its canonical hash, of
// Debian's beanstalkd after two puts and of demo kv after two SETs, and one
// replay of the same path as the search runs per transition. Also the parts of
// the soft-dirty alternative: clearing the bits, a step with them clear
// (each first write to a page then faults), the pages a step dirties.
// Run: build/bench/cmc_bench --benchmark_filter='Capture|Transition|Soft'

#include <benchmark/benchmark.h>

#include <vector>

#include "bench/bench_targets.h"
#include "bench/soft_dirty.h"
#include "decoder/canonical_state.h"
#include "tracer/backend/process_executor.h"
#include "tracer/capture/process_capture.h"
#include "tracer/process/page_map.h"

namespace {

using cmc::executor::ActionId;
using cmc::executor::PathStep;
using cmc::executor::StateKind;

const std::vector<PathStep> kPath{0, 1};

// One capture and canonical hash of the quiescent target, as the executor
// makes for the last state of a path and the one before it.
void BM_Capture(benchmark::State &state) {
  state.SetLabel(cmc::bench::label(state.range(0)));
  cmc::tracer::pin_this_thread();
  cmc::bench::StartedTarget started;
  if (auto ok = cmc::bench::start(started, state.range(0), kPath); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  cmc::tracer::ProcessCapture capture;
  cmc::decoder::CanonicalState canonical;
  std::size_t read = 0;
  for ([[maybe_unused]] auto _ : state) {
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
  state.SetLabel(cmc::bench::label(state.range(0)));
  cmc::tracer::pin_this_thread();
  cmc::bench::StartedTarget started;
  if (auto ok = cmc::bench::start(started, state.range(0), kPath); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  cmc::tracer::ProcessCapture capture;
  for ([[maybe_unused]] auto _ : state)
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
  state.SetLabel(cmc::bench::label(state.range(0)));
  cmc::tracer::pin_this_thread();
  cmc::tracer::ProcessExecutor executor(cmc::bench::spec_of(
      state.range(0),
      state.range(1) != 0 ? StateKind::kProcess : StateKind::kRegions));
  for ([[maybe_unused]] auto _ : state)
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

// The pages of the target's writable memory whose soft-dirty bit is set.
std::size_t dirty_pages(const cmc::tracer::Tracee &tracee) {
  auto maps = tracee.maps();
  if (!maps)
    return 0;
  auto pages = cmc::tracer::writable_pages_with(tracee.pid(), *maps,
                                                cmc::tracer::kPageSoftDirty);
  return pages ? pages->size() : 0;
}

// One more put (SET) on the quiescent target; /N/1 clears the soft-dirty
// bits before it, as tracking the pages a step writes would.
void BM_SoftDirtyStep(benchmark::State &state) {
  state.SetLabel(cmc::bench::label(state.range(0)));
  const bool clear = state.range(1) != 0;
  cmc::tracer::pin_this_thread();
  cmc::bench::StartedTarget started;
  if (auto ok = cmc::bench::start(started, state.range(0), kPath); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  const pid_t pid = started.run->tracee().pid();
  std::size_t dirty = 0;
  for ([[maybe_unused]] auto _ : state) {
    state.PauseTiming();
    if (clear && !cmc::bench::clear_soft_dirty(pid))
      return state.SkipWithError("cannot write clear_refs");
    state.ResumeTiming();
    auto fault = started.run->step(0);
    if (!fault || *fault)
      return state.SkipWithError("the step failed");
    state.PauseTiming();
    static_cast<void>(started.run->drain());
    if (clear)
      dirty = dirty_pages(started.run->tracee());
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
  state.SetLabel(cmc::bench::label(state.range(0)));
  cmc::tracer::pin_this_thread();
  cmc::bench::StartedTarget started;
  if (auto ok = cmc::bench::start(started, state.range(0), kPath); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  const pid_t pid = started.run->tracee().pid();
  for ([[maybe_unused]] auto _ : state)
    if (!cmc::bench::clear_soft_dirty(pid))
      return state.SkipWithError("cannot write clear_refs");
}
BENCHMARK(BM_SoftDirtyClear)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

} // namespace
