// Session's thread states on a scripted process: which stops make a
// thread held, ready or running, when a step ends quiescent, how the
// threads' creation and end are followed, and that they run one at a time
// on cmc's futexes (the fake reports no stop of a thread cmc has not
// resumed).

#include "tracer/control/session.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <csignal>

#include "fake_process.h"

namespace cmc::tracer::session_test {
namespace {

using fake::Pipe;

using namespace std::chrono_literals;
using executor::Fault;

constexpr pid_t kLeader = 1000;
constexpr pid_t kWorker = 1001;
constexpr int kFd = 3;
constexpr std::uint64_t kBuffer = 0x10000;

struct SessionTest : ::testing::Test {
  fake::ScriptedProcess process{kLeader};
  Pipe input;
  Session session{process, 1};

  SessionTest() {
    process.map(kBuffer, 4096);
    process.give_fd(kFd, input.ends[0]);
  }
  // A read of kFd by thread tid, which blocks while the pipe is empty.
  void reads(pid_t tid) {
    process.then(
        fake::seccomp_stop(tid, fake::entering(SYS_read, kFd, kBuffer, 16)));
  }
  // Runs a step that must end quiescent.
  void quiescent() {
    auto fault = session.run_until_quiescent();
    ASSERT_TRUE(fault) << fault.error().message;
    ASSERT_FALSE(*fault) << "fault of kind "
                         << static_cast<int>((*fault)->kind);
  }
  // Runs a step that must end with a fault.
  Fault faults() {
    auto fault = session.run_until_quiescent();
    EXPECT_TRUE(fault) << fault.error().message;
    EXPECT_TRUE(fault && *fault);
    return fault && *fault ? **fault : Fault{};
  }
};

TEST_F(SessionTest, ABlockingReadWithNothingToReadIsHeld) {
  reads(kLeader);
  quiescent();
  EXPECT_TRUE(process.script_done());
  EXPECT_EQ(session.waits_in(), "read");
  // The leader, stopped at its exec, was resumed once; held in the read,
  // it stays stopped.
  ASSERT_EQ(process.resumes().size(), 1U);
  const auto threads = session.thread_registers();
  ASSERT_EQ(threads.size(), 1U);
  EXPECT_EQ(threads[0].id, kLeader);
  EXPECT_EQ(threads[0].registers.syscall_number(), SYS_read);
  // Still nothing to read: the next step resumes nothing.
  quiescent();
  EXPECT_EQ(process.resumes().size(), 1U);
}

TEST_F(SessionTest, InputReleasesAHeldThread) {
  reads(kLeader);
  quiescent();
  ASSERT_TRUE(input.send());
  process.then({kLeader, fake::exit_status(4)});
  const Fault fault = faults();
  EXPECT_EQ(fault.kind, Fault::Kind::kExit);
  EXPECT_EQ(fault.code, 4);
  ASSERT_EQ(process.resumes().size(), 2U);
  EXPECT_EQ(process.resumes()[1].tid, kLeader);
  EXPECT_EQ(process.resumes()[1].signal, 0);
}

TEST_F(SessionTest, AnAnsweredCallRunsOnToTheNextStop) {
  process.then(fake::seccomp_stop(
      kLeader, fake::entering(SYS_clock_gettime, CLOCK_MONOTONIC, kBuffer)));
  reads(kLeader);
  quiescent();
  const auto &regs = process.registers_of(kLeader);
  // The read's registers as it stopped; the clock_gettime before it was
  // skipped (orig_rax -1) with 0 and ran on.
  EXPECT_EQ(regs.syscall_number(), SYS_read);
  ASSERT_EQ(process.resumes().size(), 2U);
  EXPECT_EQ(process.at<timespec>(kBuffer).tv_sec,
            VirtualClock::kMonotonicStart.count());
}

TEST_F(SessionTest, AnAnsweredCallIsSkippedWithItsResult) {
  process.then(fake::seccomp_stop(
      kLeader, fake::entering(SYS_clock_gettime, 99, kBuffer)));
  process.then({kLeader, fake::exit_status(0)});
  EXPECT_EQ(faults().kind, Fault::Kind::kExit);
  const auto &regs = process.registers_of(kLeader);
  EXPECT_EQ(regs.syscall_number(), -1);
  EXPECT_EQ(regs.result(), -EINVAL);
}

TEST_F(SessionTest, AFutexWaitWithNoTimeoutIsHeld) {
  process.put(kBuffer, std::uint32_t{7});
  process.then(fake::seccomp_stop(
      kLeader, fake::entering(SYS_futex, kBuffer, FUTEX_WAIT_PRIVATE, 7, 0)));
  // Alone in a futex wait: nothing can wake it.
  EXPECT_EQ(faults().kind, Fault::Kind::kDeadlock);
  EXPECT_EQ(process.resumes().size(), 1U) << "held at its entry, in cmc";
  EXPECT_EQ(session.waits_in(), "futex");
}

TEST_F(SessionTest, AFutexWaitOnAChangedWordRuns) {
  process.put(kBuffer, std::uint32_t{8});
  process.then(fake::seccomp_stop(
      kLeader, fake::entering(SYS_futex, kBuffer, FUTEX_WAIT_PRIVATE, 7, 0)));
  reads(kLeader); // after the kernel's EAGAIN
  quiescent();
  EXPECT_EQ(process.resumes().size(), 2U);
}

TEST_F(SessionTest, ANewThreadIsFollowed) {
  process.add_thread(kWorker);
  process.then({kLeader, fake::event_status(PTRACE_EVENT_CLONE), {}, kWorker});
  process.then({kWorker, fake::signal_status(SIGSTOP)});
  reads(kLeader);
  reads(kWorker);
  quiescent();
  EXPECT_EQ(session.thread_count(), 2U);
  EXPECT_EQ(session.waits_in(), "read");
  EXPECT_EQ(process.adopted(), std::vector<pid_t>{kWorker});
  // The leader resumed at its start and after its clone, and ran until it
  // waited; the worker then, from its first stop,
  // with no signal (ptrace's SIGSTOP is not the target's).
  ASSERT_EQ(process.resumes().size(), 3U);
  EXPECT_EQ(process.resumes()[2].tid, kWorker);
  EXPECT_EQ(process.resumes()[2].signal, 0);
  const auto threads = session.thread_registers();
  ASSERT_EQ(threads.size(), 2U);
  EXPECT_EQ(threads[0].id, kLeader); // in order of creation
  EXPECT_EQ(threads[1].id, kWorker);
}

TEST_F(SessionTest, AThreadThatEndsIsForgotten) {
  process.add_thread(kWorker);
  process.then({kLeader, fake::event_status(PTRACE_EVENT_CLONE), {}, kWorker});
  process.then({kWorker, fake::signal_status(SIGSTOP)});
  reads(kLeader);
  process.then({kWorker, fake::exit_status(0)});
  quiescent();
  EXPECT_EQ(session.thread_count(), 1U);
  EXPECT_EQ(process.forgotten(), std::vector<pid_t>{kWorker});
}

// A process the target forks is followed under the one scheduler: the
// parent runs on until it waits, then the child from its first stop.
TEST_F(SessionTest, AForkedProcessIsFollowed) {
  constexpr pid_t kChild = 2000; // not a thread of the target
  process.then({kLeader, fake::event_status(PTRACE_EVENT_FORK), {}, kChild});
  process.then({kChild, fake::signal_status(SIGSTOP)});
  reads(kLeader);
  reads(kChild);
  quiescent();
  EXPECT_EQ(session.process_count(), 2U);
  EXPECT_EQ(session.thread_count(), 2U);
  EXPECT_EQ(process.adopted(), std::vector<pid_t>{kChild});
  ASSERT_EQ(process.resumes().size(), 3U);
  EXPECT_EQ(process.resumes()[1].tid, kLeader);
  EXPECT_EQ(process.resumes()[2].tid, kChild);
  EXPECT_EQ(process.resumes()[2].signal, 0);
  const auto processes = session.process_registers();
  ASSERT_EQ(processes.size(), 2U);
  ASSERT_EQ(processes[1].size(), 1U);
  EXPECT_EQ(processes[0].front().id, kLeader);
  EXPECT_EQ(processes[1].front().id, kChild);
}

// The parent of a vfork waits in the kernel until its child execs or
// ends: resumed first, it would block with the child never run.
TEST_F(SessionTest, AVforkRunsTheChildFirst) {
  constexpr pid_t kChild = 2000;
  process.then({kLeader, fake::event_status(PTRACE_EVENT_VFORK), {}, kChild});
  process.then({kChild, fake::signal_status(SIGSTOP)});
  reads(kChild);
  reads(kLeader);
  quiescent();
  ASSERT_EQ(process.resumes().size(), 3U);
  EXPECT_EQ(process.resumes()[1].tid, kChild);
  EXPECT_EQ(process.resumes()[2].tid, kLeader);
}

// A child that exits ends neither the step nor the target.
TEST_F(SessionTest, AChildThatExitsIsForgotten) {
  constexpr pid_t kChild = 2000;
  process.then({kLeader, fake::event_status(PTRACE_EVENT_FORK), {}, kChild});
  process.then({kChild, fake::signal_status(SIGSTOP)});
  reads(kLeader);
  process.then({kChild, fake::exit_status(0)});
  quiescent();
  EXPECT_EQ(session.process_count(), 1U);
  EXPECT_EQ(process.forgotten(), std::vector<pid_t>{kChild});
}

// A child killed by a signal is a crash of the server.
TEST_F(SessionTest, AChildKilledByASignalIsAFault) {
  constexpr pid_t kChild = 2000;
  process.then({kLeader, fake::event_status(PTRACE_EVENT_FORK), {}, kChild});
  process.then({kChild, fake::signal_status(SIGSTOP)});
  reads(kLeader);
  process.then({kChild, SIGSEGV});
  const Fault fault = faults();
  EXPECT_EQ(fault.kind, Fault::Kind::kSignal);
  EXPECT_EQ(fault.code, SIGSEGV);
}

TEST_F(SessionTest, ASleepIsHeldUntilTheClockPassesItsDeadline) {
  process.put(kBuffer, timespec{1, 0});
  process.then(
      fake::seccomp_stop(kLeader, fake::entering(SYS_nanosleep, kBuffer, 0)));
  quiescent();
  EXPECT_EQ(session.waits_in(), "nanosleep");
  const auto held = session.hidden_state();
  ASSERT_TRUE(session.advance_clock(600ms));
  quiescent();
  EXPECT_EQ(process.resumes().size(), 1U) << "its deadline is not reached";
  EXPECT_NE(session.hidden_state(), held) << "the clock is hidden state";
  ASSERT_TRUE(session.advance_clock(400ms));
  const auto &regs = process.registers_of(kLeader);
  EXPECT_EQ(regs.syscall_number(), -1);
  EXPECT_EQ(regs.result(), 0);
  process.then({kLeader, fake::exit_status(0)});
  EXPECT_EQ(faults().kind, Fault::Kind::kExit);
  EXPECT_EQ(process.resumes().size(), 2U);
}

TEST_F(SessionTest, StartUpRunsSleepsToTheirDeadlinesUntilServing) {
  process.put(kBuffer + 64, timespec{2, 0});
  process.then(fake::seccomp_stop(
      kLeader, fake::entering(SYS_nanosleep, kBuffer + 64, 0)));
  reads(kLeader); // after its sleep
  auto fault = session.run_until_serving();
  ASSERT_TRUE(fault) << fault.error().message;
  EXPECT_FALSE(*fault);
  EXPECT_EQ(session.environment().clock().elapsed(), 2s);
  EXPECT_EQ(session.waits_in(), "read");
}

TEST_F(SessionTest, ASignalIsDeliveredAndItsDeathReported) {
  process.then({kLeader, fake::signal_status(SIGSEGV)});
  process.then({kLeader, SIGSEGV}); // killed by it
  const Fault fault = faults();
  EXPECT_EQ(fault.kind, Fault::Kind::kSignal);
  EXPECT_EQ(fault.code, SIGSEGV);
  ASSERT_EQ(process.resumes().size(), 2U);
  EXPECT_EQ(process.resumes()[1].signal, SIGSEGV);
}

TEST_F(SessionTest, ADeathTheWatchdogCausedIsAHang) {
  process.set_hung(true);
  process.then({kLeader, SIGKILL});
  EXPECT_EQ(faults().kind, Fault::Kind::kHang);
}

TEST_F(SessionTest, SavedStateIsPutBack) {
  reads(kLeader);
  quiescent();
  const Session::Saved saved = session.save();
  const auto at_read = session.hidden_state();
  ASSERT_TRUE(input.send());
  process.then(
      fake::seccomp_stop(kLeader, fake::entering(SYS_nanosleep, kBuffer, 0)));
  process.put(kBuffer, timespec{5, 0});
  quiescent();
  EXPECT_EQ(session.waits_in(), "nanosleep");
  session.restore(saved);
  EXPECT_EQ(session.waits_in(), "read");
  EXPECT_EQ(session.hidden_state(), at_read);
}

// The leader starts a worker and waits on a futex that the worker wakes.
struct TwoThreads : SessionTest {
  static constexpr std::uint64_t kWord = kBuffer + 128;
  TwoThreads() {
    process.add_thread(kWorker);
    process.put(kWord, std::uint32_t{0});
    process.then(
        {kLeader, fake::event_status(PTRACE_EVENT_CLONE), {}, kWorker});
    process.then({kWorker, fake::signal_status(SIGSTOP)});
  }
  void waits(pid_t tid, std::uint64_t timeout = 0) {
    process.then(fake::seccomp_stop(
        tid, fake::entering(SYS_futex, kWord, FUTEX_WAIT_PRIVATE, 0, timeout)));
  }
  void wakes(pid_t tid, int count) {
    process.then(fake::seccomp_stop(
        tid, fake::entering(SYS_futex, kWord, FUTEX_WAKE_PRIVATE,
                            static_cast<std::uint64_t>(count))));
  }
  void sleeps(pid_t tid) {
    process.then(fake::seccomp_stop(
        tid, fake::entering(SYS_nanosleep, kBuffer + 64, 0)));
  }
  [[nodiscard]] std::vector<pid_t> resumed() const {
    std::vector<pid_t> tids;
    for (const auto &resume : process.resumes())
      tids.push_back(resume.tid);
    return tids;
  }
};

TEST_F(TwoThreads, AWakeOfAnotherThreadEndsAFutexWait) {
  waits(kLeader);
  wakes(kWorker, 1);
  reads(kWorker);
  reads(kLeader);
  quiescent();
  // The worker ran only once the leader waited, and the leader only once
  // the worker waited too.
  ASSERT_EQ(resumed(),
            (std::vector<pid_t>{kLeader, kLeader, kWorker, kWorker, kLeader}));
  EXPECT_EQ(session.waits_in(), "read");
  // The wake was skipped, answered with the one waiter it woke; the wait,
  // skipped too, returned 0.
  EXPECT_EQ(process.resumes()[3].regs.syscall_number(), -1);
  EXPECT_EQ(process.resumes()[3].regs.result(), 1);
  EXPECT_EQ(process.resumes()[4].regs.syscall_number(), -1);
  EXPECT_EQ(process.resumes()[4].regs.result(), 0);
}

TEST_F(TwoThreads, AWakeWithNoWaiterWakesNobody) {
  wakes(kLeader, 1);
  reads(kLeader);
  reads(kWorker);
  quiescent();
  EXPECT_EQ(resumed(),
            (std::vector<pid_t>{kLeader, kLeader, kLeader, kWorker}));
}

TEST_F(TwoThreads, EveryThreadInAFutexWaitIsADeadlock) {
  waits(kLeader);
  waits(kWorker);
  EXPECT_EQ(faults().kind, Fault::Kind::kDeadlock);
  EXPECT_EQ(session.waits_in(), "futex");
}

TEST_F(TwoThreads, AYieldLetsTheNextThreadRun) {
  process.then(fake::seccomp_stop(kLeader, fake::entering(SYS_sched_yield)));
  reads(kWorker);
  reads(kLeader);
  quiescent();
  EXPECT_EQ(resumed(),
            (std::vector<pid_t>{kLeader, kLeader, kWorker, kLeader}));
}

TEST_F(TwoThreads, TheFutexQueueIsHiddenStateAndSaved) {
  waits(kLeader);
  reads(kWorker);
  quiescent();
  const Session::Saved saved = session.save();
  const auto queued = session.hidden_state();
  // Input ends the worker's read; it wakes the leader and both sleep.
  ASSERT_TRUE(input.send());
  process.put(kBuffer + 64, timespec{1, 0});
  wakes(kWorker, 1);
  sleeps(kWorker);
  sleeps(kLeader);
  quiescent();
  EXPECT_EQ(session.waits_in(), "nanosleep");
  EXPECT_NE(session.hidden_state(), queued);
  session.restore(saved);
  EXPECT_EQ(session.hidden_state(), queued);
}

TEST_F(TwoThreads, AThreadsEndWakesTheWaitersOfItsClearedWord) {
  // pthread_join: the leader waits on the worker's tid word, which the
  // kernel clears and wakes (a wake that cannot reach cmc's futexes) as
  // the worker ends.
  process.put(kWord, std::uint32_t{kWorker});
  process.then(fake::seccomp_stop(
      kLeader, fake::entering(SYS_futex, kWord, FUTEX_WAIT, kWorker, 0)));
  process.then({kWorker, fake::exit_status(0), {}, 0, {{kWord, 0}}});
  reads(kLeader);
  quiescent();
  EXPECT_EQ(session.thread_count(), 1U);
  EXPECT_EQ(session.waits_in(), "read");
}

TEST_F(TwoThreads, APreemptionSwitchesBeforeTheCallAndHandlesItLater) {
  // The leader's zero-length sleep is the step's first preemption point
  // (the worker could run): switched away from there, the worker runs
  // until it waits; then the leader's sleep is handled, and it reads.
  sleeps(kLeader);
  reads(kWorker);
  reads(kLeader);
  const std::array<std::uint32_t, 1> points{1};
  session.begin_step(points);
  quiescent();
  // (The leader first runs to its clone.)
  EXPECT_EQ(resumed(),
            (std::vector<pid_t>{kLeader, kLeader, kWorker, kLeader}));
  EXPECT_EQ(
      session.preempted(),
      (std::vector<std::string>{"thread 0 before nanosleep, thread 1 ran"}));
  // The sleep, answered at once, and the worker's read while the
  // preempted leader could run: two points.
  EXPECT_EQ(session.preemption_points(), 2U);
  EXPECT_EQ(process.resumes()[3].regs.syscall_number(), -1);
  EXPECT_EQ(session.waits_in(), "read");
}

TEST_F(TwoThreads, WithoutPreemptionsTheRunningThreadGoesOn) {
  sleeps(kLeader);
  reads(kLeader);
  reads(kWorker);
  session.begin_step({});
  quiescent();
  EXPECT_EQ(resumed(),
            (std::vector<pid_t>{kLeader, kLeader, kLeader, kWorker}));
  EXPECT_TRUE(session.preempted().empty());
  // The sleep and the leader's read, each while the worker could run.
  EXPECT_EQ(session.preemption_points(), 2U);
}

} // namespace
} // namespace cmc::tracer::session_test
