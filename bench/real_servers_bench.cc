// The cost of one replay of a real Debian server (beanstalkd,
// redis-server, memcached with its threads under cmc's scheduler, as
// installed by scripts/setup.sh) against the same server started without
// cmc: start, connect, one message and its reply, kill. The ratio of the
// two, from one run, is the price of cmc's control. The replay also runs
// with every system call stopping, as --preemptions > 0 makes it (each a
// preemption point): the ratio of the two is the price of preempting.
// Each replay counts its ptrace stops and those for the scheduler alone
// (futex waits and wakes, sched_yield): on a single-threaded server the
// scheduler's cost is those stops, which should be none.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/untraced_server.h"
#include "decoder/elf_file.h"
#include "decoder/region.h"
#include "tracer/backend/process_executor.h"
#include "util/unique_fd.h"

namespace {

struct Server {
  const char *program;
  std::vector<std::string> args; // after the program; PORT replaced
  const char *region;
  std::string message;
};

// Index 0: beanstalkd, 1: redis-server, 2: memcached.
const std::array<Server, 3> kServers{{
    {"/usr/bin/beanstalkd",
     {"-l", "127.0.0.1", "-p", "PORT"},
     ".bss",
     "put 0 0 10 1\r\nx\r\n"},
    {"/usr/bin/redis-server",
     {"--port", "PORT", "--save", "", "--appendonly", "no"},
     "server",
     "SET lock 1 NX\r\n"},
    {"/usr/bin/memcached",
     {"-u", "root", "-l", "127.0.0.1", "-p", "PORT", "-U", "0"},
     ".bss",
     "add lock 0 0 1\r\nA\r\n"},
}};

std::vector<std::string> argv_of(const Server &server, int port) {
  std::vector<std::string> argv{server.program};
  for (const std::string &arg : server.args)
    argv.push_back(arg == "PORT" ? std::to_string(port) : arg);
  return argv;
}

// Starts the server untraced on port, connects once it listens, sends the
// message and reads a reply. Returns false when any of it fails.
bool bare_run(const Server &server, int port) {
  std::vector<std::string> args = argv_of(server, port);
  std::vector<char *> argv;
  argv.reserve(args.size() + 1);
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  pid_t pid = -1;
  const bool started = posix_spawn(&pid, server.program, &actions, nullptr,
                                   argv.data(), environ) == 0;
  posix_spawn_file_actions_destroy(&actions);
  if (!started)
    return false;
  const cmc::UniqueFd sock =
      cmc::bench::connect_when_listening(static_cast<std::uint16_t>(port));
  std::array<char, 64> reply{};
  const auto length = static_cast<ssize_t>(server.message.size());
  const bool answered = sock.valid() &&
                        send(sock.get(), server.message.data(),
                             server.message.size(), 0) == length &&
                        recv(sock.get(), reply.data(), reply.size(), 0) > 0;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return answered;
}

void BM_BareServer(benchmark::State &state) {
  const Server &server = kServers.at(static_cast<std::size_t>(state.range(0)));
  state.SetLabel(server.program);
  // A port of its own per run: no TIME_WAIT of the run before.
  int port = 30000 + getpid() % 10000;
  for (auto _ : state) // NOLINT(clang-analyzer-deadcode.DeadStores)
    if (!bare_run(server, port++))
      return state.SkipWithError("the server did not answer");
}
BENCHMARK(BM_BareServer)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One replay of the same message under cmc, as the search runs per
// transition; the second argument 1: every system call stops.
void BM_ReplayServer(benchmark::State &state) {
  const Server &server = kServers.at(static_cast<std::size_t>(state.range(0)));
  const bool every_call = state.range(1) != 0;
  state.SetLabel(fmt::format("{}{}", server.program,
                             every_call ? ", every call stops" : ""));
  auto spec = std::make_shared<cmc::tracer::TargetSpec>();
  spec->launch.observe = every_call;
  spec->launch.program = server.program;
  spec->launch.argv = argv_of(server, 7000);
  auto elf = cmc::decoder::ElfFile::open(server.program);
  if (!elf)
    return state.SkipWithError(elf.error().message.c_str());
  auto region = cmc::decoder::resolve_region(
      *cmc::decoder::parse_region_spec(server.region), *elf);
  if (!region)
    return state.SkipWithError(region.error().message.c_str());
  spec->regions = {*region};
  spec->load_base = elf->load_base();
  spec->entry = elf->entry();
  spec->messages = {server.message};
  spec->state = cmc::executor::StateKind::kRegions;
  cmc::tracer::pin_this_thread();
  cmc::tracer::ProcessExecutor executor(spec);
  const std::vector<cmc::executor::PathStep> path{0};
  for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores)
    auto seen = executor.run(path);
    if (!seen)
      return state.SkipWithError(seen.error().message.c_str());
    state.counters["stops"] = static_cast<double>(seen->stops);
    state.counters["scheduler_stops"] =
        static_cast<double>(seen->scheduler_stops);
  }
}
BENCHMARK(BM_ReplayServer)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace
