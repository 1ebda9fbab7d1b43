// The visited set alone: a search of 10 million states must fit in 1 GiB.

#include <benchmark/benchmark.h>

#include "search/state_store.h"

namespace {

void BM_VisitedSet(benchmark::State &state) {
  const auto count = static_cast<std::uint32_t>(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    cmc::search::StateStore store;
    std::uint64_t x = 0x1234567;
    store.add({x, x}, cmc::search::StateStore::kNoParent, 0);
    for (std::uint32_t i = 1; i < count; ++i) {
      // splitmix64: uniform like real fingerprints.
      x += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      const cmc::Fingerprint fingerprint{z ^ (z >> 31), x};
      if (!store.contains(fingerprint))
        store.add(fingerprint, i - 1, static_cast<std::uint16_t>(i & 1));
    }
    bytes = store.memory_bytes();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["bytes/state"] =
      static_cast<double>(bytes) / static_cast<double>(count);
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.counters["states/s"] = benchmark::Counter(
      static_cast<double>(count) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_VisitedSet)
    ->Arg(1 << 20)
    ->Arg(10'000'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

} // namespace
