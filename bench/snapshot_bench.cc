// Snapshots (issue 17): what one step from a quiescent demo kv costs by
// each candidate mechanism. kv is quiescent after "SET a": cmc holds its
// thread at a seccomp stop on entry to its read() of the client. Each
// iteration takes the step "SET b" from there and comes back to it (the
// restore in place also from beanstalkd after a put, taking another):
// - BM_ForkSnapshot: the target forks; the child gets a connection of its
//   own, takes the step and is killed;
// - BM_InPlaceRestore: the target takes the step itself; the pages it
//   wrote (found by comparing, by soft-dirty bits or by userfaultfd write
//   protection: cmc::bench::PageTracking) and its registers are written
//   back;
// - BM_ForkFloor: fork+exit+wait of an untraced process of kv's size.
// What the search does today is BM_Transition/1/0 (capture_bench.cc): a
// fresh spawn replays "SET a" and takes "SET b" (/0/0: beanstalkd). Times are
// per iteration; each part of one is a counter in microseconds, and *_faults
// count the minor page faults of the process named. Run: build/bench/cmc_bench
// --benchmark_repetitions=3 --benchmark_filter=
//   'Transition/1/0|SoftDirtyStep/1/0|Capture/1|Snapshot|AtStop|InPlace|Floor'

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_targets.h"
#include "bench/page_tracker.h"
#include "bench/stop_call.h"
#include "decoder/canonical_state.h"
#include "tracer/backend/process_executor.h"
#include "tracer/capture/process_capture.h"
#include "tracer/capture/saved_pages.h"
#include "tracer/net/connection.h"
#include "tracer/process/ptrace_unsafe.h"

namespace {

namespace sys = cmc::tracer::sys;
using cmc::Error;
using cmc::Result;
using cmc::executor::ActionId;
using cmc::executor::PathStep;
using cmc::tracer::Connection;
using cmc::tracer::Tracee;

constexpr std::int64_t kKv = 1;         // cmc::bench::spec_of's index
const std::vector<PathStep> kPrefix{0}; // SET a
constexpr ActionId kStep = 1;           // SET b
constexpr std::string_view kReply = "OK\n";

// The time of each part of an iteration, for a benchmark of manual time.
class Laps {
public:
  void start() {
    iteration_ = 0;
    last_ = Clock::now();
  }
  // Adds the time since the last lap (or start) to part.
  void lap(const std::string &part) {
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    totals_[part] += seconds;
    iteration_ += seconds;
    last_ = now;
  }
  // Leaves the time since the last lap out.
  void skip() { last_ = Clock::now(); }
  [[nodiscard]] double iteration() const { return iteration_; }
  // Each part's mean per iteration, in microseconds.
  void report(benchmark::State &state) const {
    for (const auto &[part, seconds] : totals_)
      state.counters[part + "_us"] =
          benchmark::Counter(seconds * 1e6, benchmark::Counter::kAvgIterations);
  }

private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_;
  double iteration_ = 0;
  std::map<std::string, double> totals_;
};

// The minor page faults of process pid so far: field 10 of /proc/PID/stat
// (the 8th after the command name, which may hold spaces).
long minor_faults(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(file, text);
  std::istringstream fields(text.substr(text.rfind(')') + 1));
  std::string field;
  for (int i = 3; i <= 10; ++i)
    fields >> field;
  return std::stol(field);
}

benchmark::Counter per_iteration(double total) {
  return {total, benchmark::Counter::kAvgIterations};
}

// A target started under cmc and quiescent after kPrefix, with the
// registers its thread stopped with (at the seccomp stop of the call it
// waits in).
struct Quiescent {
  cmc::bench::StartedTarget started;
  user_regs_struct at_wait{};

  [[nodiscard]] Tracee &tracee() { return started.run->tracee(); }
};

// target: cmc::bench::spec_of's index.
Result<void> start(Quiescent &quiescent, std::int64_t target) {
  if (auto ok = cmc::bench::start(quiescent.started, target, kPrefix); !ok)
    return ok;
  static_cast<void>(quiescent.started.run->drain()); // the prefix's replies
  auto regs = quiescent.tracee().registers();
  if (!regs)
    return regs.error();
  quiescent.at_wait = regs->raw();
  return {};
}

// The step in the target itself, as the search takes it.
Result<void> step(cmc::tracer::TargetRun &run) {
  auto fault = run.step(kStep);
  if (!fault)
    return fault.error();
  if (*fault || run.drain().at(0).empty())
    return Error{"the target did not answer the step"};
  return {};
}

// ---- Fork snapshots ----

// A process the target forked, traced by cmc (which is also its parent):
// killed and reaped at the latest when this ends.
class Child {
public:
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;
  ~Child() { end(); }
  [[nodiscard]] pid_t pid() const { return pid_; }
  void end() {
    if (pid_ < 0)
      return;
    kill(pid_, SIGKILL);
    for (auto status = sys::wait_for(pid_); status && !status->gone();)
      status = sys::wait_for(pid_);
    pid_ = -1;
  }

private:
  pid_t pid_;
};

// Makes the target, held at the seccomp stop of its read(), fork; the
// child at its first stop.
Result<pid_t> fork_at_wait(const Quiescent &kv, pid_t pid) {
  // CLONE_PARENT: the child is cmc's, as the target is, so cmc's waitpid
  // reaps it. A child of the target's would stay a zombie until the target
  // waited, and its SIGCHLD, though ignored, would be queued to the target
  // (the kernel discards no signal sent to a traced process).
  auto forked = cmc::bench::call_at_stop(pid, kv.at_wait, SYS_clone,
                                         {CLONE_PARENT | SIGCHLD});
  if (!forked)
    return forked.error();
  if (!forked->child)
    return Error{fmt::format("the injected clone failed: {}",
                             std::strerror(static_cast<int>(-forked->result)))};
  return *forked->child;
}

// The target's descriptors of kv's two sockets, as system call arguments.
struct Sockets {
  std::uint64_t listening = 0;
  std::uint64_t client = 0;
};

// The listening socket is the descriptor with SO_ACCEPTCONN set; the
// client's is the one kv reads.
Result<Sockets> sockets_of(const Tracee &tracee,
                           const user_regs_struct &at_wait) {
  if (at_wait.orig_rax != SYS_read)
    return Error{"kv is not quiescent in read()"};
  std::optional<int> listening_fd;
  const auto dir =
      std::filesystem::path("/proc") / std::to_string(tracee.pid()) / "fd";
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    const int fd = std::stoi(entry.path().filename().string());
    const auto copy = tracee.duplicate_fd(fd);
    int listening = 0;
    socklen_t length = sizeof listening;
    if (copy &&
        getsockopt(copy->get(), SOL_SOCKET, SO_ACCEPTCONN, &listening,
                   &length) == 0 &&
        listening != 0)
      listening_fd = fd;
  }
  if (!listening_fd)
    return Error{"kv has no listening socket"};
  return Sockets{static_cast<std::uint64_t>(*listening_fd), at_wait.rdi};
}

// Gives the child, held as the target at the seccomp stop of its read(),
// a connection of its own in place of the one it shares with the target
// (a fork shares each open file, so the socket): cmc has connected again,
// the child accepts that connection on the listening socket it also
// shares (the stopped target takes nothing from it) and moves it to the
// client's descriptor number.
Result<void> accept_as_client(const Quiescent &kv, pid_t child,
                              const Sockets &sockets) {
  const auto call = [&](long nr, std::uint64_t a, std::uint64_t b) {
    auto made = cmc::bench::call_at_stop(child, kv.at_wait, nr, {a, b});
    if (made && made->result < 0)
      return Result<long>(
          Error{fmt::format("system call {} in the child: {}", nr,
                            std::strerror(static_cast<int>(-made->result)))});
    return made ? Result<long>(made->result) : Result<long>(made.error());
  };
  auto accepted = call(SYS_accept, sockets.listening, 0);
  if (!accepted)
    return accepted.error();
  const auto fd = static_cast<std::uint64_t>(*accepted);
  if (auto moved = call(SYS_dup2, fd, sockets.client); !moved)
    return moved.error();
  if (auto closed = call(SYS_close, fd, 0); !closed)
    return closed.error();
  return {};
}

// Sends the step's message to the child, held at its read's seccomp stop,
// and runs it until it waits again (kv reads, answers and reads again);
// the reply.
Result<std::string> step_child(pid_t child, Connection &connection,
                               const std::string &message) {
  if (auto sent = connection.send(message, std::chrono::steady_clock::now() +
                                               std::chrono::seconds(10));
      !sent)
    return sent.error();
  if (auto ran = cmc::bench::run_to_seccomp_stop(child); !ran)
    return ran.error();
  std::string reply;
  for (int tries = 0; tries < 100 && reply.size() < kReply.size(); ++tries) {
    if (!connection.receive())
      return Error{"the child closed its connection"};
    reply += connection.drain();
    if (reply.size() < kReply.size())
      connection.wait(std::chrono::milliseconds(10));
  }
  return reply;
}

// What a fork snapshot of kv connects to and moves.
struct Branching {
  Sockets sockets;
  sockaddr_storage address{};
  double child_faults = 0;
};

// One fork snapshot, timed by parts: fork (the injected clone, and the
// child taken to the quiescent point), connect and fds (a private client
// connection), step (SET b in the child), kill (the child killed and
// reaped, its connection closed).
Result<void> branch(Quiescent &kv, Branching &branching, Laps &laps) {
  auto forked = fork_at_wait(kv, kv.tracee().pid());
  if (!forked)
    return forked.error();
  Child child(*forked);
  if (auto set =
          sys::set_registers(child.pid(), cmc::bench::reentering(kv.at_wait));
      !set)
    return set;
  if (auto waits = cmc::bench::run_to_seccomp_stop(child.pid()); !waits)
    return waits;
  laps.lap("fork");
  const auto port = cmc::tracer::nth_client_port(1);
  auto opened =
      Connection::open(kv.started.netns->fd(), branching.address, *port);
  if (!opened)
    return opened.error();
  std::optional<Connection> connection(std::move(*opened));
  laps.lap("connect");
  if (auto accepted = accept_as_client(kv, child.pid(), branching.sockets);
      !accepted)
    return accepted;
  laps.lap("fds");
  auto reply =
      step_child(child.pid(), *connection, kv.started.spec->messages[kStep]);
  if (!reply || *reply != kReply)
    return Error{"the child did not answer the step"};
  laps.lap("step");
  branching.child_faults += static_cast<double>(minor_faults(child.pid()));
  laps.skip();
  child.end();
  connection.reset();
  laps.lap("kill");
  return {};
}

void BM_ForkSnapshot(benchmark::State &state) {
  cmc::tracer::pin_this_thread();
  Quiescent kv;
  if (auto ok = start(kv, kKv); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  auto sockets = sockets_of(kv.tracee(), kv.at_wait);
  auto address = kv.started.run->session().listen_address();
  if (!sockets)
    return state.SkipWithError(sockets.error().message.c_str());
  if (!address || !*address)
    return state.SkipWithError("kv listens nowhere");
  Branching branching{*sockets, **address};
  const pid_t pid = kv.tracee().pid();
  const long target_before = minor_faults(pid);
  Laps laps;
  for ([[maybe_unused]] auto _ : state) {
    laps.start();
    if (auto ok = branch(kv, branching, laps); !ok)
      return state.SkipWithError(ok.error().message.c_str());
    state.SetIterationTime(laps.iteration());
  }
  const auto target_faults =
      static_cast<double>(minor_faults(pid) - target_before);
  // The target, which forked them all, still serves its own client.
  if (auto stepped = step(*kv.started.run); !stepped)
    return state.SkipWithError(stepped.error().message.c_str());
  laps.report(state);
  state.counters["child_faults"] = per_iteration(branching.child_faults);
  state.counters["target_faults"] = per_iteration(target_faults);
}
BENCHMARK(BM_ForkSnapshot)->Unit(benchmark::kMicrosecond)->UseManualTime();

// One system call made by the quiescent target at cmc's request
// (getppid, at the seccomp stop of its read()): the unit of what a
// snapshot must do in the target itself (install a descriptor, undo an
// epoll_ctl).
void BM_CallAtStop(benchmark::State &state) {
  cmc::tracer::pin_this_thread();
  Quiescent kv;
  if (auto ok = start(kv, kKv); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  for ([[maybe_unused]] auto _ : state)
    if (auto call = cmc::bench::call_at_stop(kv.tracee().pid(), kv.at_wait,
                                             SYS_getppid, {});
        !call)
      return state.SkipWithError(call.error().message.c_str());
  if (auto stepped = step(*kv.started.run); !stepped)
    return state.SkipWithError(stepped.error().message.c_str());
}
BENCHMARK(BM_CallAtStop)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---- In-place restore ----

// The fingerprint of kv's whole process, canonical.
Result<cmc::Fingerprint> whole_process(const cmc::tracer::TargetRun &run) {
  cmc::tracer::ProcessCapture capture;
  auto image = run.read_process(capture);
  if (!image)
    return image.error();
  return cmc::decoder::canonicalize(*image, {}).fingerprint;
}

// Restores in place, timed by parts: save (the state's pages, registers
// and mappings; once per state, shared by its successors), arm (the
// tracking of writes), step, find (the pages written), write_back.
struct Restore {
  Laps laps;
  double faults = 0;
  double written = 0;
  std::size_t saved = 0; // pages, at the last save
  std::size_t unsaved = 0;
};

Result<void> restore_in_place(Quiescent &target,
                              cmc::bench::PageTracker &tracker,
                              Restore &restore) {
  Tracee &tracee = target.tracee();
  auto saved = cmc::tracer::SavedPages::save(tracee);
  if (!saved)
    return saved.error();
  restore.laps.lap("save");
  restore.saved = saved->pages.size();
  if (auto armed = tracker.arm(); !armed)
    return armed;
  restore.laps.lap("arm");
  const long before = minor_faults(tracee.pid());
  restore.laps.skip();
  if (auto stepped = step(*target.started.run); !stepped)
    return stepped;
  restore.laps.lap("step");
  restore.faults += static_cast<double>(minor_faults(tracee.pid()) - before);
  restore.laps.skip();
  auto written = tracker.written(tracee, *saved);
  if (!written)
    return written.error();
  restore.laps.lap("find");
  auto unsaved = saved->write_back(tracee, *written);
  if (!unsaved)
    return unsaved.error();
  restore.laps.lap("write_back");
  restore.written += static_cast<double>(written->size());
  restore.unsaved += *unsaved;
  return {};
}

// Whether a restore in place gives back the whole process it started from
// (the canonical fingerprint cmc keys states on), the step having changed
// it.
Result<void> check_restore(Quiescent &target,
                           cmc::bench::PageTracker &tracker) {
  auto before = whole_process(*target.started.run);
  if (!before)
    return before.error();
  Restore restore;
  restore.laps.start();
  if (auto restored = restore_in_place(target, tracker, restore); !restored)
    return restored;
  auto after = whole_process(*target.started.run);
  if (!after)
    return after.error();
  if (restore.written == 0)
    return Error{"no page of the target was found written: the kernel "
                 "does not track them so"};
  if (restore.unsaved != 0 || *after != *before)
    return Error{"the restore in place did not restore the target"};
  if (auto stepped = step(*target.started.run); !stepped)
    return stepped;
  auto moved = whole_process(*target.started.run);
  if (!moved || *moved == *before)
    return Error{"the step did not change the target: the check proves "
                 "nothing"};
  return {};
}

Result<cmc::bench::PageTracker> tracker_of(Quiescent &target,
                                           cmc::bench::PageTracking how) {
  auto maps = target.tracee().maps();
  if (!maps)
    return maps.error();
  return cmc::bench::PageTracker::create(target.tracee(), target.at_wait, how,
                                         *maps);
}

// /N/0: pages compared; /N/1: soft-dirty bits; /N/2: userfaultfd write
// protection and PAGEMAP_SCAN (cmc::bench::PageTracking). N: the target
// (cmc::bench::spec_of: 0 beanstalkd after a put, taking another; 1 kv).
void BM_InPlaceRestore(benchmark::State &state) {
  state.SetLabel(cmc::bench::label(state.range(0)));
  const auto how = static_cast<cmc::bench::PageTracking>(state.range(1));
  cmc::tracer::pin_this_thread();
  Quiescent checked;
  if (auto ok = start(checked, state.range(0)); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  auto checker = tracker_of(checked, how);
  if (!checker)
    return state.SkipWithError(checker.error().message.c_str());
  if (auto ok = check_restore(checked, *checker); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  Quiescent target;
  if (auto ok = start(target, state.range(0)); !ok)
    return state.SkipWithError(ok.error().message.c_str());
  auto tracker = tracker_of(target, how);
  if (!tracker)
    return state.SkipWithError(tracker.error().message.c_str());
  Restore restore;
  for ([[maybe_unused]] auto _ : state) {
    restore.laps.start();
    if (auto ok = restore_in_place(target, *tracker, restore); !ok)
      return state.SkipWithError(ok.error().message.c_str());
    state.SetIterationTime(restore.laps.iteration());
  }
  restore.laps.report(state);
  state.counters["target_faults"] = per_iteration(restore.faults);
  state.counters["written_pages"] = per_iteration(restore.written);
  state.counters["saved_pages"] = static_cast<double>(restore.saved);
  if (restore.unsaved != 0)
    state.SkipWithError("a step wrote a page that was not saved");
}
BENCHMARK(BM_InPlaceRestore)
    ->ArgsProduct({{1, 0}, {0, 1, 2}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// ---- The floor ----

// fork+exit+wait in targets/fork_loop, untraced, timed by itself;
// parent_faults also counts the faults of its answer's read and write.
void BM_ForkFloor(benchmark::State &state) {
  cmc::tracer::pin_this_thread();
  const std::string loop = cmc::bench::binary_dir() + "/targets/fork_loop";
  std::array<int, 2> requests{};
  std::array<int, 2> answers{};
  if (pipe2(requests.data(), O_CLOEXEC) != 0 ||
      pipe2(answers.data(), O_CLOEXEC) != 0)
    return state.SkipWithError("pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, requests[0], 0);
  posix_spawn_file_actions_adddup2(&actions, answers[1], 1);
  std::array<char *, 2> argv{const_cast<char *>(loop.c_str()), nullptr};
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, loop.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(requests[0]);
  close(answers[1]);
  double child_faults = 0;
  double parent_faults = 0;
  for ([[maybe_unused]] auto _ : state) {
    const std::uint32_t one = 1;
    std::array<std::int64_t, 2> answer{}; // nanoseconds, the child's faults
    const long before = spawned == 0 ? minor_faults(pid) : 0;
    if (spawned != 0 || write(requests[1], &one, sizeof one) != sizeof one ||
        read(answers[0], answer.data(), sizeof answer) != sizeof answer) {
      state.SkipWithError("fork_loop did not answer");
      break;
    }
    state.SetIterationTime(static_cast<double>(answer[0]) * 1e-9);
    child_faults += static_cast<double>(answer[1]);
    parent_faults += static_cast<double>(minor_faults(pid) - before);
  }
  state.counters["child_faults"] = per_iteration(child_faults);
  state.counters["parent_faults"] = per_iteration(parent_faults);
  close(requests[1]);
  close(answers[0]);
  if (spawned == 0)
    waitpid(pid, nullptr, 0);
}
BENCHMARK(BM_ForkFloor)->Unit(benchmark::kMicrosecond)->UseManualTime();

} // namespace
