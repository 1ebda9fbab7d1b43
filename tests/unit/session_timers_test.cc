// Session's signal timers on a scripted process: a tick past a timer's
// deadline sends its signal to the thread the rule picks, ends that
// thread's held wait as the kernel would, and gives the delivery the
// kernel's siginfo.

#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>

#include <fmt/format.h>

#include "fake_process.h"
#include "tracer/control/session.h"

namespace cmc::tracer::session_timers_test {
namespace {

using namespace std::chrono_literals;
using executor::Fault;

constexpr pid_t kLeader = 1000;
constexpr pid_t kWorker = 1001;
constexpr std::uint64_t kBuffer = 0x10000;

// The /proc status of a thread that blocks and catches these signal sets.
std::string status(std::uint64_t blocked, std::uint64_t caught) {
  return fmt::format("Name:\tt\nSigBlk:\t{:016x}\nSigIgn:\t0000000000000000\n"
                     "SigCgt:\t{:016x}\n",
                     blocked, caught);
}

constexpr std::uint64_t kAlarm = std::uint64_t{1} << (SIGALRM - 1);

struct SessionTimers : ::testing::Test {
  fake::ScriptedProcess process{kLeader};
  Session session{process, 1};

  SessionTimers() {
    process.map(kBuffer, 4096);
    process.put(kBuffer, timespec{3600, 0});
  }
  void sleeps(pid_t tid) {
    process.then(fake::seccomp_stop(
        tid, fake::entering(SYS_nanosleep, kBuffer, kBuffer + 64)));
  }
  void quiescent() {
    auto fault = session.run_until_quiescent();
    ASSERT_TRUE(fault) << fault.error().message;
    ASSERT_FALSE(*fault);
  }
};

TEST_F(SessionTimers, AnAlarmEndsAHeldSleepWithEintrAndTheTimeLeft) {
  process.then(fake::seccomp_stop(kLeader, fake::entering(SYS_alarm, 5)));
  sleeps(kLeader);
  quiescent();
  EXPECT_EQ(session.waits_in(), "nanosleep");
  process.set_proc_file("task/1000/status", status(0, kAlarm));
  ASSERT_TRUE(session.advance_clock(4s));
  EXPECT_TRUE(process.signals().empty()) << "short of its deadline";
  ASSERT_TRUE(session.advance_clock(6s));
  ASSERT_EQ(process.signals().size(), 1U);
  EXPECT_EQ(process.signals()[0], std::pair(kLeader, SIGALRM));
  const auto &regs = process.registers_of(kLeader);
  EXPECT_EQ(regs.syscall_number(), -1);
  EXPECT_EQ(regs.result(), -EINTR);
  EXPECT_EQ(process.at<timespec>(kBuffer + 64).tv_sec, 3590);
  // At its delivery, cmc's tgkill (SI_TKILL from nobody the target's
  // namespace shows) becomes the kernel's SI_KERNEL.
  siginfo_t sent{};
  sent.si_signo = SIGALRM;
  sent.si_code = SI_TKILL;
  process.focus(kLeader);
  ASSERT_TRUE(process.set_signal_info(sent));
  process.then({kLeader, fake::signal_status(SIGALRM)});
  process.then({kLeader, fake::exit_status(0)});
  auto fault = session.run_until_quiescent();
  ASSERT_TRUE(fault && *fault);
  ASSERT_GE(process.resumes().size(), 3U);
  EXPECT_EQ(process.resumes().back().signal, SIGALRM);
  process.focus(kLeader);
  const auto info = process.signal_info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->si_code, SI_KERNEL);
}

TEST_F(SessionTimers, AProcessSignalGoesToTheFirstThreadThatDoesNotBlockIt) {
  process.add_thread(kWorker);
  process.then(fake::seccomp_stop(kLeader, fake::entering(SYS_alarm, 1)));
  process.then({kLeader, fake::event_status(PTRACE_EVENT_CLONE), {}, kWorker});
  process.then({kWorker, fake::signal_status(SIGSTOP)});
  sleeps(kLeader);
  sleeps(kWorker);
  quiescent();
  process.set_proc_file("task/1000/status", status(kAlarm, kAlarm));
  process.set_proc_file("task/1001/status", status(0, kAlarm));
  ASSERT_TRUE(session.advance_clock(2s));
  ASSERT_EQ(process.signals().size(), 1U);
  EXPECT_EQ(process.signals()[0], std::pair(kWorker, SIGALRM));
  EXPECT_EQ(process.registers_of(kWorker).result(), -EINTR);
  // The leader, which blocks it, sleeps on.
  EXPECT_EQ(process.registers_of(kLeader).syscall_number(), SYS_nanosleep);
  EXPECT_EQ(session.waits_in(), "nanosleep");
}

} // namespace
} // namespace cmc::tracer::session_timers_test
