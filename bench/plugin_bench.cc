// What running a property plugin in its host process
// (app/plugins/plugin_host.h) costs per call against calling it in cmc's own
// process, as before: the demo plugin lock_grant on a path of N steps with
// 64-byte states.

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <string>
#include <vector>

#include "app/plugins/property_plugin.h"
#include "cmc/property.h"

namespace {

std::string build_dir() {
  std::array<char, 4096> path{};
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  std::string self(path.data(),
                   static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
  return self.substr(0, self.rfind('/')) + "/..";
}

// A path of steps steps: A and B take turns sending LOCK and getting "OK".
struct Path {
  std::shared_ptr<cmc::tracer::TargetSpec> spec;
  std::vector<cmc::executor::PathStep> actions;
  std::vector<std::vector<std::byte>> states;
  std::vector<std::vector<std::string>> received;

  explicit Path(std::size_t steps)
      : spec(std::make_shared<cmc::tracer::TargetSpec>()),
        states(steps + 1, std::vector<std::byte>(64)) {
    spec->messages = {"LOCK\n", "LOCK\n"};
    spec->clients = {"A", "B"};
    spec->client_of = {0, 1};
    for (std::size_t i = 0; i < steps; ++i) {
      actions.emplace_back(static_cast<cmc::executor::ActionId>(i % 2));
      received.push_back(i % 2 == 0 ? std::vector<std::string>{"OK\n", ""}
                                    : std::vector<std::string>{"", "NO\n"});
    }
  }
  [[nodiscard]] cmc::search::PathView view() const {
    return {actions, states, received};
  }
};

void BM_PluginInHost(benchmark::State &state) {
  const Path path(static_cast<std::size_t>(state.range(0)));
  const cmc::app::PluginProperty property(
      build_dir() + "/demo/properties/lock_grant.so", path.spec, {},
      build_dir() + "/tools/cmc");
  for (auto _ : state) // NOLINT(clang-analyzer-deadcode.DeadStores)
    benchmark::DoNotOptimize(property.check_path(path.view()));
}
BENCHMARK(BM_PluginInHost)->Arg(1)->Arg(4)->Arg(16)->Arg(64);

// The same call in this process, the cmc_path built as property_plugin.cc
// builds it for the host.
void BM_PluginInProcess(benchmark::State &state) {
  const Path path(static_cast<std::size_t>(state.range(0)));
  void *handle =
      dlopen((build_dir() + "/demo/properties/lock_grant.so").c_str(),
             RTLD_NOW | RTLD_LOCAL);
  const auto *property =
      static_cast<const cmc_property *>(dlsym(handle, "cmc_property"));
  const std::array<const char *, 2> clients{"A", "B"};
  std::array<char, 1024> violation{};
  for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores)
    std::vector<std::vector<cmc_bytes>> received(path.actions.size());
    std::vector<cmc_step> steps;
    for (std::size_t i = 0; i < path.actions.size(); ++i) {
      for (const std::string &text : path.received[i])
        received[i].push_back(
            {reinterpret_cast<const unsigned char *>(text.data()),
             text.size()});
      const auto client = static_cast<std::size_t>(path.actions[i].action);
      cmc_step step{
          CMC_STEP_SEND,
          client,
          {reinterpret_cast<const unsigned char *>("LOCK\n"), 5},
          received[i][client],
          received[i].data(),
          {reinterpret_cast<const unsigned char *>(path.states[i].data()), 64},
          {reinterpret_cast<const unsigned char *>(path.states[i + 1].data()),
           64}};
      steps.push_back(step);
    }
    const cmc_path whole{2,       clients.data(), 0,
                         nullptr, steps.size(),   steps.data()};
    benchmark::DoNotOptimize(
        property->check(&whole, violation.data(), violation.size()));
  }
  dlclose(handle);
}
BENCHMARK(BM_PluginInProcess)->Arg(1)->Arg(4)->Arg(16)->Arg(64);

} // namespace

BENCHMARK_MAIN();
