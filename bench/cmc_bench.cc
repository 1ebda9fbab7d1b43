// The cost floor of cmc's mechanism and the replay cost on top of it.
// Run: build/bench/cmc_bench (as root: targets get a network namespace).

#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "bench/bench_targets.h"
#include "bench/untraced_server.h"
#include "decoder/elf_file.h"
#include "decoder/region.h"
#include "search/breadth_first.h"
#include "tracer/backend/process_executor.h"
#include "tracer/control/session.h"
#include "tracer/process/tracee.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/syscalls/syscall_table.h"
#include "util/unique_fd.h"

namespace {

using cmc::executor::ActionId;
using cmc::executor::PathStep;

// demo/NAME with its cmc_state region and one "SET x" message per cell.
std::shared_ptr<const cmc::tracer::TargetSpec>
kv_spec(const std::string &name = "kv", char last_cell = 'b') {
  auto spec = std::make_shared<cmc::tracer::TargetSpec>();
  spec->launch.program = cmc::bench::binary_dir() + "/../demo/" + name;
  spec->launch.argv = {spec->launch.program, "7000"};
  auto elf = cmc::decoder::ElfFile::open(spec->launch.program);
  if (!elf)
    throw std::runtime_error(elf.error().message);
  auto region = cmc::decoder::resolve_region(
      *cmc::decoder::parse_region_spec("cmc_state"), *elf);
  if (!region)
    throw std::runtime_error(region.error().message);
  spec->regions = {*region};
  spec->load_base = elf->load_base();
  spec->entry = elf->entry();
  spec->state = cmc::executor::StateKind::kRegions;
  for (char cell = 'a'; cell <= last_cell; ++cell)
    spec->messages.push_back(std::string("SET ") + cell + "\n");
  return spec;
}

void report_error(benchmark::State &state, const cmc::Error &error) {
  state.SkipWithError(error.message.c_str());
}

// Floor: a fresh traced spawn of kv to its first quiescent point
// (listening, connected, waiting for the first message).
void BM_SpawnToQuiescence(benchmark::State &state) {
  cmc::tracer::pin_this_thread();
  cmc::tracer::ProcessExecutor executor(kv_spec());
  for ([[maybe_unused]] auto _ : state) {
    auto seen = executor.run({});
    if (!seen)
      return report_error(state, seen.error());
  }
  state.counters["spawns/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SpawnToQuiescence)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Floor: a fresh spawn of kv under ptrace and the seccomp filter, to its
// first stop after exec (ld.so's first trapped read), then killed and
// reaped. /1 also takes control at the exec stop as every run does (vDSO
// patched, clock pages protected, AT_RANDOM written, entry breakpoint);
// /2 also gives it an absolute --writable directory (an empty copy, bind-
// mounted in a mount namespace of its own).
void BM_TracedSpawn(benchmark::State &state) {
  const bool control = state.range(0) != 0;
  cmc::tracer::pin_this_thread();
  auto netns = cmc::tracer::NetworkNamespace::create();
  if (!netns)
    return report_error(state, netns.error());
  const auto spec = kv_spec();
  cmc::tracer::LaunchSpec launch = spec->launch;
  launch.netns = netns->fd();
  std::string empty = "/tmp/cmc-bench-XXXXXX";
  if (state.range(0) == 2 && mkdtemp(empty.data()) != nullptr)
    launch.writable = {empty};
  for ([[maybe_unused]] auto _ : state) {
    auto tracee = cmc::tracer::Tracee::spawn(
        launch, cmc::tracer::seccomp_filter(launch.observe));
    if (!tracee)
      return report_error(state, tracee.error());
    cmc::tracer::Session session(**tracee, 0);
    if (control)
      if (auto controlled = session.take_control(); !controlled)
        return report_error(state, controlled.error());
    auto status = (*tracee)->resume_and_wait();
    if (!status || status->gone())
      return state.SkipWithError("kv did not stop after exec");
  }
  if (!launch.writable.empty())
    rmdir(empty.c_str());
  state.counters["spawns/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TracedSpawn)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// targets/syscall_loop, which stops at every read.
cmc::tracer::LaunchSpec syscall_loop() {
  cmc::tracer::LaunchSpec launch;
  launch.program = cmc::bench::binary_dir() + "/targets/syscall_loop";
  launch.argv = {launch.program};
  return launch;
}

// Floor: one seccomp-triggered ptrace stop and continue, tracer and target
// on one CPU.
void BM_InterceptedSyscall(benchmark::State &state) {
  cmc::tracer::pin_this_thread();
  auto tracee = cmc::tracer::Tracee::spawn(syscall_loop(),
                                           cmc::tracer::seccomp_filter(false));
  if (!tracee)
    return report_error(state, tracee.error());
  for ([[maybe_unused]] auto _ : state) {
    auto status = (*tracee)->resume_and_wait();
    if (!status || !status->stopped())
      return state.SkipWithError("the syscall loop stopped running");
  }
  state.counters["stops/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InterceptedSyscall)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Floor: one process_vm_readv of N bytes from a stopped target.
void BM_RegionRead(benchmark::State &state) {
  auto tracee = cmc::tracer::Tracee::spawn(syscall_loop(),
                                           cmc::tracer::seccomp_filter(false));
  if (!tracee)
    return report_error(state, tracee.error());
  auto regs = (*tracee)->registers();
  if (!regs)
    return report_error(state, regs.error());
  const auto length = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> bytes(length);
  // The stack below the stack pointer is mapped and readable.
  const iovec remote{reinterpret_cast<void *>(regs->sp() - length), length};
  for ([[maybe_unused]] auto _ : state) {
    if (auto read = (*tracee)->read(std::span(&remote, 1), bytes); !read)
      return report_error(state, read.error());
  }
}
BENCHMARK(BM_RegionRead)->Arg(2)->Arg(4096)->UseRealTime();

// Floor: one message round trip with kv running untraced: send "SET a",
// read "OK". A replayed step cannot cost less than this plus one stop.
void BM_MessageRoundTrip(benchmark::State &state) {
  const std::string kv = cmc::bench::binary_dir() + "/../demo/kv";
  const std::string port = std::to_string(20000 + getpid() % 20000);
  pid_t pid = -1;
  std::array<char *, 3> argv{const_cast<char *>(kv.c_str()),
                             const_cast<char *>(port.c_str()), nullptr};
  if (posix_spawn(&pid, kv.c_str(), nullptr, nullptr, argv.data(), environ) !=
      0)
    return state.SkipWithError("cannot start kv");
  const cmc::UniqueFd sock = cmc::bench::connect_when_listening(
      static_cast<std::uint16_t>(std::stoi(port)));
  std::array<char, 16> reply{};
  for ([[maybe_unused]] auto _ : state) {
    if (!sock.valid() || send(sock.get(), "SET a\n", 6, 0) != 6 ||
        recv(sock.get(), reply.data(), reply.size(), 0) != 3) {
      state.SkipWithError("kv did not answer");
      break;
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}
BENCHMARK(BM_MessageRoundTrip)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One replay: spawn plus a path of N messages, as the search does per
// transition.
void BM_Replay(benchmark::State &state) {
  cmc::tracer::pin_this_thread();
  cmc::tracer::ProcessExecutor executor(kv_spec());
  std::vector<PathStep> path(static_cast<std::size_t>(state.range(0)));
  for (std::size_t i = 0; i < path.size(); ++i)
    path[i] = static_cast<ActionId>(i % 2);
  for ([[maybe_unused]] auto _ : state) {
    auto seen = executor.run(path);
    if (!seen)
      return report_error(state, seen.error());
  }
  state.counters["replays/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Replay)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The whole check of kv with ten cells (1024 states, 10240 transitions) at
// -j 1 and -j (all CPUs) (/1/*, /0/*), each transition replayed (/*/0) or
// taken from a snapshot restored in place (/*/1, --mode snapshot).
void BM_CheckKv10(benchmark::State &state) {
  auto snapshots =
      std::make_shared<cmc::tracer::TargetSpec>(*kv_spec("kv10", 'j'));
  snapshots->snapshots = state.range(1) == 1;
  const std::shared_ptr<const cmc::tracer::TargetSpec> spec = snapshots;
  state.SetLabel(spec->snapshots ? "snapshot" : "replay");
  const cmc::search::ExecutorFactory factory = [spec] {
    cmc::tracer::pin_this_thread();
    return std::make_unique<cmc::tracer::ProcessExecutor>(spec);
  };
  const std::vector<cmc::search::RegionLayout> layout{
      {"cmc_state", 0, spec->regions.at(0).length}};
  const cmc::search::NoProperty property;
  cmc::search::Options options;
  options.jobs = static_cast<unsigned>(state.range(0) == 0
                                           ? std::thread::hardware_concurrency()
                                           : state.range(0));
  cmc::search::Report report;
  for ([[maybe_unused]] auto _ : state) {
    auto result = cmc::search::breadth_first(factory, spec->messages.size(),
                                             property, layout, options);
    if (!result)
      return report_error(state, result.error());
    report = *result;
  }
  if (report.distinct_states != 1024 || report.transitions != 10240)
    return state.SkipWithError("kv10 gave the wrong counts");
  const auto runs = static_cast<double>(state.iterations());
  state.counters["jobs"] = options.jobs;
  state.counters["states/s"] =
      benchmark::Counter(runs * static_cast<double>(report.distinct_states),
                         benchmark::Counter::kIsRate);
  state.counters["transitions/s"] =
      benchmark::Counter(runs * static_cast<double>(report.transitions),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CheckKv10)
    ->ArgsProduct({{1, 0}, {0, 1}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace

BENCHMARK_MAIN();
