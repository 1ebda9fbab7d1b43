// SignalTimers: alarm, setitimer and the POSIX timers on the virtual clock,
// with a scripted process's memory for their arguments.

#include <sys/syscall.h>
#include <sys/time.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <ctime>

#include "fake_process.h"
#include "tracer/time/signal_timers.h"

namespace cmc::tracer::signal_timers_test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kIn = 0x10000;
constexpr std::uint64_t kOut = 0x20000;
constexpr std::uint64_t kUnmapped = 0x90000;

struct Timers {
  fake::ScriptedProcess process;
  VirtualClock clock;
  SignalTimers timers;

  Timers() {
    process.map(kIn, 4096);
    process.map(kOut, 4096);
  }

  // timer_create(clock, event at kIn or none, kOut): the id it wrote.
  int create(clockid_t id, const sigevent *event = nullptr) {
    if (event != nullptr)
      process.put(kIn, *event);
    const auto regs =
        fake::entering(SYS_timer_create, static_cast<std::uint32_t>(id),
                       event != nullptr ? kIn : 0, kOut);
    EXPECT_EQ(timers.create(process, regs), 0);
    return process.at<int>(kOut);
  }
  long settime(int id, std::chrono::nanoseconds value,
               std::chrono::nanoseconds interval = 0ns, int flags = 0) {
    process.put(kIn, itimerspec{to_timespec(interval), to_timespec(value)});
    return timers.settime(
        process, clock,
        fake::entering(SYS_timer_settime, static_cast<std::uint64_t>(id),
                       static_cast<std::uint64_t>(flags), kIn, 0));
  }
  itimerspec gettime(int id) {
    EXPECT_EQ(
        timers.gettime(process, clock,
                       fake::entering(SYS_timer_gettime,
                                      static_cast<std::uint64_t>(id), kOut)),
        0);
    return process.at<itimerspec>(kOut);
  }
};

TEST(SignalTimers, AlarmReturnsTheRoundedSecondsLeftOfThePreviousOne) {
  Timers t;
  EXPECT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 10)), 0);
  t.clock.advance(3400ms);
  // 6.6 s left: 7.
  EXPECT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 5)), 7);
  t.clock.advance(4999ms);
  // 1 ms left: at least 1.
  EXPECT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 0)), 1);
  EXPECT_FALSE(t.timers.due(t.clock));
  t.clock.advance(1h);
  EXPECT_TRUE(t.timers.fire_due(t.clock).empty());
}

TEST(SignalTimers, AnAlarmPastItsDeadlineSendsSigalrmWithSiKernel) {
  Timers t;
  ASSERT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 5)), 0);
  t.clock.advance(4s);
  EXPECT_TRUE(t.timers.fire_due(t.clock).empty());
  t.clock.advance(1s);
  const auto signals = t.timers.fire_due(t.clock);
  ASSERT_EQ(signals.size(), 1U);
  EXPECT_EQ(signals[0].signal, SIGALRM);
  EXPECT_EQ(signals[0].key, SignalTimers::kRealTimer);
  EXPECT_FALSE(signals[0].thread);
  t.timers.sent(1000, signals[0].key, SIGALRM);
  EXPECT_FALSE(t.timers.delivered(1001, SIGALRM)); // another thread's
  const auto info = t.timers.delivered(1000, SIGALRM);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->si_signo, SIGALRM);
  EXPECT_EQ(info->si_code, SI_KERNEL);
  EXPECT_FALSE(t.timers.delivered(1000, SIGALRM)); // once
  // One-shot: disarmed.
  EXPECT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 0)), 0);
}

TEST(SignalTimers, SetitimerAndGetitimerShowTheTimeLeftInMicroseconds) {
  Timers t;
  t.process.put(kIn, itimerval{{0, 250000}, {2, 500000}});
  ASSERT_EQ(
      t.timers.setitimer(t.process, t.clock,
                         fake::entering(SYS_setitimer, ITIMER_PROF, kIn, kOut)),
      0);
  EXPECT_EQ(t.process.at<itimerval>(kOut).it_value.tv_sec, 0);
  t.clock.advance(1s + 1234ns);
  ASSERT_EQ(
      t.timers.getitimer(t.process, t.clock,
                         fake::entering(SYS_getitimer, ITIMER_PROF, kOut)),
      0);
  const auto left = t.process.at<itimerval>(kOut);
  EXPECT_EQ(left.it_value.tv_sec, 1);
  EXPECT_EQ(left.it_value.tv_usec, 499998);
  EXPECT_EQ(left.it_interval.tv_usec, 250000);
  // ITIMER_PROF sends SIGPROF, every 250 ms after its first.
  t.clock.advance(2s);
  const auto signals = t.timers.fire_due(t.clock);
  ASSERT_EQ(signals.size(), 1U);
  EXPECT_EQ(signals[0].signal, SIGPROF);
  EXPECT_EQ(t.timers.setitimer(t.process, t.clock,
                               fake::entering(SYS_setitimer, 7, kIn, 0)),
            -EINVAL);
  t.process.put(kIn, itimerval{{0, 0}, {0, 1000000}});
  EXPECT_EQ(
      t.timers.setitimer(t.process, t.clock,
                         fake::entering(SYS_setitimer, ITIMER_REAL, kIn, 0)),
      -EINVAL);
  EXPECT_EQ(
      t.timers.getitimer(t.process, t.clock,
                         fake::entering(SYS_getitimer, ITIMER_REAL, kUnmapped)),
      -EFAULT);
}

TEST(SignalTimers, TimerIdsCountFromZeroAndEveryKernelClockIsAccepted) {
  Timers t;
  EXPECT_EQ(t.create(CLOCK_MONOTONIC), 0);
  EXPECT_EQ(t.create(CLOCK_REALTIME), 1);
  // haproxy's watchdog: the CPU-time clock of one of its threads.
  EXPECT_EQ(t.create(static_cast<clockid_t>(0xfffe05be)), 2);
  EXPECT_EQ(t.create(CLOCK_PROCESS_CPUTIME_ID), 3);
  EXPECT_EQ(t.create(CLOCK_BOOTTIME), 4);
  EXPECT_EQ(
      t.timers.create(t.process, fake::entering(SYS_timer_create,
                                                CLOCK_MONOTONIC_RAW, 0, kOut)),
      -EOPNOTSUPP);
  EXPECT_EQ(
      t.timers.create(t.process, fake::entering(SYS_timer_create, 99, 0, kOut)),
      -EINVAL);
  EXPECT_EQ(
      t.timers.create(t.process, fake::entering(SYS_timer_create,
                                                CLOCK_MONOTONIC, 0, kUnmapped)),
      -EFAULT);
  sigevent bad{};
  bad.sigev_notify = 77;
  t.process.put(kIn, bad);
  EXPECT_EQ(
      t.timers.create(t.process, fake::entering(SYS_timer_create,
                                                CLOCK_MONOTONIC, kIn, kOut)),
      -EINVAL);
  EXPECT_EQ(t.create(CLOCK_MONOTONIC), 5); // failures took no id
}

TEST(SignalTimers, APeriodicTimerCountsOverrunsAndIsSignalledOnce) {
  Timers t;
  sigevent event{};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = SIGRTMIN;
  event.sigev_value.sival_int = 42;
  const int id = t.create(CLOCK_MONOTONIC, &event);
  ASSERT_EQ(t.settime(id, 1s, 100ms), 0);
  t.clock.advance(1350ms); // expirations at 1.0, 1.1, 1.2, 1.3 s
  auto signals = t.timers.fire_due(t.clock);
  ASSERT_EQ(signals.size(), 1U);
  EXPECT_EQ(signals[0].signal, SIGRTMIN);
  t.timers.sent(1000, signals[0].key, SIGRTMIN);
  // Not yet delivered: later expirations are overruns of the pending one.
  t.clock.advance(100ms);
  EXPECT_TRUE(t.timers.fire_due(t.clock).empty());
  const auto info = t.timers.delivered(1000, SIGRTMIN);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->si_code, SI_TIMER);
  EXPECT_EQ(info->si_timerid, id);
  EXPECT_EQ(info->si_overrun, 4);
  EXPECT_EQ(info->si_value.sival_int, 42);
  EXPECT_EQ(t.timers.getoverrun(fake::entering(SYS_timer_getoverrun,
                                               static_cast<std::uint64_t>(id))),
            4);
  const itimerspec left = t.gettime(id);
  EXPECT_EQ(left.it_value.tv_nsec, 50000000);
  EXPECT_EQ(left.it_interval.tv_nsec, 100000000);
}

TEST(SignalTimers, AnAbsoluteTimeIsAnInstantOfTheTimersClock) {
  Timers t;
  const int id = t.create(CLOCK_MONOTONIC);
  // CLOCK_MONOTONIC reads 1000 s at start: 1003 s is 3 s on.
  ASSERT_EQ(t.settime(id, 1003s, 0ns, TIMER_ABSTIME), 0);
  EXPECT_EQ(t.gettime(id).it_value.tv_sec, 3);
  const int cpu = t.create(static_cast<clockid_t>(0xfffe05be));
  ASSERT_EQ(t.settime(cpu, 2s, 0ns, TIMER_ABSTIME), 0);
  t.clock.advance(2s);
  const auto signals = t.timers.fire_due(t.clock);
  ASSERT_EQ(signals.size(), 1U);
  EXPECT_EQ(signals[0].key, cpu);
  EXPECT_EQ(signals[0].signal, SIGALRM); // no sigevent: SIGALRM
  // An instant already past is due at once.
  ASSERT_EQ(t.settime(cpu, 1s, 0ns, TIMER_ABSTIME), 0);
  EXPECT_TRUE(t.timers.due(t.clock));
  // A tv_nsec of a second or more is no time.
  t.process.put(kIn, itimerspec{{0, 0}, {1, 1000000000}});
  EXPECT_EQ(t.timers.settime(t.process, t.clock,
                             fake::entering(SYS_timer_settime,
                                            static_cast<std::uint64_t>(id), 0,
                                            kIn, 0)),
            -EINVAL);
}

TEST(SignalTimers, ThreadIdTimersNameTheirThreadAndNoneSignalsNobody) {
  Timers t;
  sigevent to_thread{};
  to_thread.sigev_notify = SIGEV_THREAD_ID;
  to_thread.sigev_signo = SIGALRM;
  to_thread._sigev_un._tid = 7;
  const int thread = t.create(CLOCK_MONOTONIC, &to_thread);
  sigevent none{};
  none.sigev_notify = SIGEV_NONE;
  const int quiet = t.create(CLOCK_MONOTONIC, &none);
  ASSERT_EQ(t.settime(thread, 1s), 0);
  ASSERT_EQ(t.settime(quiet, 1s), 0);
  t.clock.advance(1s);
  const auto signals = t.timers.fire_due(t.clock);
  ASSERT_EQ(signals.size(), 1U);
  EXPECT_EQ(signals[0].key, thread);
  EXPECT_EQ(signals[0].thread, 7);
  EXPECT_EQ(t.gettime(quiet).it_value.tv_sec, 0); // expired, disarmed
}

TEST(SignalTimers, DeleteAndExecEndPosixTimersOnly) {
  Timers t;
  const int id = t.create(CLOCK_MONOTONIC);
  ASSERT_EQ(t.settime(id, 1s), 0);
  const auto regs =
      fake::entering(SYS_timer_delete, static_cast<std::uint64_t>(id));
  EXPECT_EQ(t.timers.remove(regs), 0);
  EXPECT_EQ(t.timers.remove(regs), -EINVAL);
  EXPECT_EQ(t.settime(id, 1s), -EINVAL);
  ASSERT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 5)), 0);
  EXPECT_EQ(t.create(CLOCK_MONOTONIC), 1);
  t.timers.exec();
  EXPECT_EQ(t.create(CLOCK_MONOTONIC), 0);
  // alarm() is kept across exec.
  EXPECT_EQ(t.timers.alarm(t.clock, fake::entering(SYS_alarm, 0)), 5);
}

TEST(SignalTimers, TheStateHasTheDeadlines) {
  Timers one;
  Timers two;
  ASSERT_EQ(one.timers.alarm(one.clock, fake::entering(SYS_alarm, 5)), 0);
  ASSERT_EQ(two.timers.alarm(two.clock, fake::entering(SYS_alarm, 6)), 0);
  std::vector<std::int64_t> first;
  std::vector<std::int64_t> second;
  one.timers.append_state(first);
  two.timers.append_state(second);
  EXPECT_NE(first, second);
  // A copy (a snapshot's) is the same state.
  const SignalTimers copy = one.timers;
  std::vector<std::int64_t> copied;
  copy.append_state(copied);
  EXPECT_EQ(first, copied);
}

TEST(SignalTimers, SignalSetsAreReadFromProcStatus) {
  const std::string status =
      "Name:\tx\nSigQ:\t0/1\nSigPnd:\t0000000000000000\n"
      "SigBlk:\t0000000000002000\nSigIgn:\t0000000000001000\n"
      "SigCgt:\t0000000180000000\n";
  EXPECT_EQ(status_signal_set(status, "SigBlk"), 0x2000U);
  EXPECT_EQ(status_signal_set(status, "SigIgn"), 0x1000U);
  EXPECT_EQ(status_signal_set(status, "SigCgt"), 0x180000000U);
  EXPECT_FALSE(status_signal_set(status, "ShdPnd"));
  EXPECT_FALSE(status_signal_set("Blk:\tzz\n", "Blk"));
}

} // namespace
} // namespace cmc::tracer::signal_timers_test
