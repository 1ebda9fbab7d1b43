// The system-call handlers of the table's rows, each at a seccomp stop of
// a scripted process: fake memory and registers, the test's own pipes and
// timerfds as the target's descriptors.

#include <asm/prctl.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "fake_process.h"
#include "tracer/syscalls/environment.h"
#include "tracer/syscalls/input_wait.h"
#include "tracer/syscalls/syscall_table.h"

namespace cmc::tracer::handlers_test {
namespace {

using fake::Pipe;

using namespace std::chrono_literals;

constexpr std::uint64_t kBuffer = 0x10000;
constexpr std::uint64_t kOther = 0x20000;
constexpr std::uint64_t kUnmapped = 0x90000;

// A target stopped at the entry of a call, and its handler's answer.
struct Stopped {
  fake::ScriptedProcess process;
  Environment environment{1};
  std::optional<int> listening_fd;
  std::size_t unrestorable_calls = 0;

  Stopped() {
    process.map(kBuffer, 4096);
    process.map(kOther, 4096);
  }

  // Runs the handler of the row of regs' call.
  Action run(const Registers &regs) {
    const Syscall *call = syscall_of(regs.syscall_number());
    EXPECT_NE(call, nullptr);
    EXPECT_NE(call->handler, nullptr);
    SeccompStop stop{process, environment,  *call,
                     regs,    listening_fd, unrestorable_calls};
    auto action = call->handler(stop);
    EXPECT_TRUE(action) << action.error().message;
    return action ? *action : Action{};
  }
  // The result of a call cmc answers.
  long answer(const Registers &regs) {
    const Action action = run(regs);
    EXPECT_EQ(action.kind, Action::Kind::kAnswer);
    return action.result;
  }
};

struct timezone timezone_value(int minutes_west, int dst) {
  struct timezone zone {};
  zone.tz_minuteswest = minutes_west;
  zone.tz_dsttime = dst;
  return zone;
}

std::chrono::nanoseconds as_duration(const timespec &time) {
  return std::chrono::seconds(time.tv_sec) +
         std::chrono::nanoseconds(time.tv_nsec);
}

// --- Time -----------------------------------------------------------------

TEST(ClockHandlers, ClockGettimeWritesTheVirtualClock) {
  Stopped stopped;
  EXPECT_EQ(stopped.answer(
                fake::entering(SYS_clock_gettime, CLOCK_MONOTONIC, kBuffer)),
            0);
  EXPECT_EQ(as_duration(stopped.process.at<timespec>(kBuffer)),
            VirtualClock::kMonotonicStart);

  stopped.environment.clock().advance(2500ms);
  EXPECT_EQ(stopped.answer(
                fake::entering(SYS_clock_gettime, CLOCK_REALTIME, kBuffer)),
            0);
  const auto now = stopped.process.at<timespec>(kBuffer);
  EXPECT_EQ(now.tv_sec, VirtualClock::kRealtimeStart.count() + 2);
  EXPECT_EQ(now.tv_nsec, 500'000'000);
}

TEST(ClockHandlers, ClockGettimeFaultsOnAnAddressNotMapped) {
  Stopped stopped;
  EXPECT_EQ(stopped.answer(
                fake::entering(SYS_clock_gettime, CLOCK_MONOTONIC, kUnmapped)),
            -EFAULT);
  // Across the end of a mapping, too.
  EXPECT_EQ(stopped.answer(fake::entering(SYS_clock_gettime, CLOCK_MONOTONIC,
                                          kBuffer + 4096 - 8)),
            -EFAULT);
}

TEST(ClockHandlers, ClockGettimeRefusesAClockThatIsNone) {
  Stopped stopped;
  stopped.process.put(kBuffer, timespec{7, 7});
  EXPECT_EQ(stopped.answer(fake::entering(SYS_clock_gettime, 99, kBuffer)),
            -EINVAL);
  const auto untouched = stopped.process.at<timespec>(kBuffer);
  EXPECT_EQ(untouched.tv_sec, 7);
  EXPECT_EQ(untouched.tv_nsec, 7);
}

TEST(ClockHandlers, ClockGetresIsOneNanosecond) {
  Stopped stopped;
  EXPECT_EQ(stopped.answer(
                fake::entering(SYS_clock_getres, CLOCK_MONOTONIC, kBuffer)),
            0);
  const auto resolution = stopped.process.at<timespec>(kBuffer);
  EXPECT_EQ(resolution.tv_sec, 0);
  EXPECT_EQ(resolution.tv_nsec, 1);
  EXPECT_EQ(stopped.answer(fake::entering(SYS_clock_getres, 99, kBuffer)),
            -EINVAL);
}

TEST(ClockHandlers, GettimeofdayWritesMicrosecondsAndUtc) {
  Stopped stopped;
  stopped.environment.clock().advance(1'234'567ns);
  stopped.process.put(kOther, timezone_value(60, 1)); // overwritten with UTC
  EXPECT_EQ(stopped.answer(fake::entering(SYS_gettimeofday, kBuffer, kOther)),
            0);
  const auto now = stopped.process.at<timeval>(kBuffer);
  EXPECT_EQ(now.tv_sec, VirtualClock::kRealtimeStart.count());
  EXPECT_EQ(now.tv_usec, 1234);
  const auto zone = stopped.process.at<struct timezone>(kOther);
  EXPECT_EQ(zone.tz_minuteswest, 0);
  EXPECT_EQ(zone.tz_dsttime, 0);
}

TEST(ClockHandlers, GettimeofdayFaultsOnEitherAddress) {
  Stopped stopped;
  EXPECT_EQ(stopped.answer(fake::entering(SYS_gettimeofday, kUnmapped, kOther)),
            -EFAULT);
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_gettimeofday, kBuffer, kUnmapped)),
      -EFAULT);
  // A null timezone is not asked for.
  EXPECT_EQ(stopped.answer(fake::entering(SYS_gettimeofday, kBuffer, 0)), 0);
}

TEST(ClockHandlers, TimeReturnsAndStoresTheSeconds) {
  Stopped stopped;
  stopped.environment.clock().advance(90s);
  const long expected = VirtualClock::kRealtimeStart.count() + 90;
  EXPECT_EQ(stopped.answer(fake::entering(SYS_time, kBuffer)), expected);
  EXPECT_EQ(stopped.process.at<time_t>(kBuffer), expected);
  EXPECT_EQ(stopped.answer(fake::entering(SYS_time, 0)), expected);
  EXPECT_EQ(stopped.answer(fake::entering(SYS_time, kUnmapped)), -EFAULT);
}

// --- CPU identity ---------------------------------------------------------

TEST(CpuHandlers, SchedGetaffinityIsCpuZeroOnly) {
  Stopped stopped;
  stopped.process.put(kBuffer, ~std::uint64_t{0});
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_sched_getaffinity, 0, 128, kBuffer)),
      8);
  EXPECT_EQ(stopped.process.at<std::uint64_t>(kBuffer), 1U);
  // The kernel's cpumask is whole longs; a buffer of fewer bytes fails.
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_sched_getaffinity, 0, 4, kBuffer)),
      -EINVAL);
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_sched_getaffinity, 0, 8, kUnmapped)),
      -EFAULT);
}

TEST(CpuHandlers, SchedSetaffinityTakesASetWithCpuZeroAndNeverMoves) {
  Stopped stopped;
  stopped.process.put(kBuffer, std::uint64_t{0b11});
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_sched_setaffinity, 0, 8, kBuffer)), 0);
  stopped.process.put(kBuffer, std::uint64_t{0b10}); // CPU 1 only
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_sched_setaffinity, 0, 8, kBuffer)),
      -EINVAL);
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_sched_setaffinity, 0, 8, kUnmapped)),
      -EFAULT);
}

TEST(CpuHandlers, TheTargetCannotTurnCpuidFaultingOff) {
  Stopped stopped;
  const Registers get = fake::entering(SYS_arch_prctl, ARCH_GET_CPUID, 0);
  const Registers set = fake::entering(SYS_arch_prctl, ARCH_SET_CPUID, 1);
  if (!cpuid_faults()) {
    EXPECT_EQ(stopped.run(get).kind, Action::Kind::kRun);
    EXPECT_EQ(stopped.run(set).kind, Action::Kind::kRun);
    return;
  }
  EXPECT_EQ(stopped.answer(get), 1);
  EXPECT_EQ(stopped.answer(set), 0);
}

// --- timerfd --------------------------------------------------------------

constexpr int kTimerFd = 5;

// A target whose descriptor kTimerFd is a CLOCK_MONOTONIC timerfd.
struct WithTimer : Stopped {
  WithTimer() {
    process.set_proc_file(fmt::format("fdinfo/{}", kTimerFd),
                          "pos:\t0\nflags:\t02000002\nmnt_id:\t15\n"
                          "ino:\t1057\nclockid: 1\nticks: 0\n");
  }
  long settime(const itimerspec &value, int flags = 0) {
    process.put(kBuffer, value);
    return answer(fake::entering(SYS_timerfd_settime, kTimerFd,
                                 static_cast<std::uint64_t>(flags), kBuffer,
                                 kOther));
  }
  itimerspec gettime() {
    EXPECT_EQ(answer(fake::entering(SYS_timerfd_gettime, kTimerFd, kOther)), 0);
    return process.at<itimerspec>(kOther);
  }
};

TEST(TimerFdHandlers, SettimeArmsOnTheVirtualClock) {
  WithTimer stopped;
  EXPECT_EQ(stopped.settime({{1, 0}, {3, 0}}), 0);
  EXPECT_EQ(as_duration(stopped.process.at<itimerspec>(kOther).it_value), 0s)
      << "old_value of a disarmed timer";
  stopped.environment.clock().advance(1200ms);
  const itimerspec left = stopped.gettime();
  EXPECT_EQ(as_duration(left.it_value), 1800ms);
  EXPECT_EQ(as_duration(left.it_interval), 1s);
}

TEST(TimerFdHandlers, SettimeReturnsTheOldValueAndDisarms) {
  WithTimer stopped;
  ASSERT_EQ(stopped.settime({{0, 0}, {10, 0}}), 0);
  stopped.environment.clock().advance(4s);
  EXPECT_EQ(stopped.settime({{0, 0}, {0, 0}}), 0);
  EXPECT_EQ(as_duration(stopped.process.at<itimerspec>(kOther).it_value), 6s);
  EXPECT_EQ(as_duration(stopped.gettime().it_value), 0s);
}

TEST(TimerFdHandlers, AbsoluteDeadlineIsAnInstantOfItsClock) {
  WithTimer stopped;
  const timespec at{VirtualClock::kMonotonicStart.count() + 5, 0};
  ASSERT_EQ(stopped.settime({{0, 0}, at}, TFD_TIMER_ABSTIME), 0);
  stopped.environment.clock().advance(2s);
  EXPECT_EQ(as_duration(stopped.gettime().it_value), 3s);
}

TEST(TimerFdHandlers, SettimeFailsAsTheKernelDoes) {
  WithTimer stopped;
  // new_value not mapped: EFAULT.
  EXPECT_EQ(stopped.answer(
                fake::entering(SYS_timerfd_settime, kTimerFd, 0, kUnmapped, 0)),
            -EFAULT);
  // A descriptor that is no timerfd: EINVAL.
  stopped.process.put(kBuffer, itimerspec{{0, 0}, {1, 0}});
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_timerfd_settime, 9, 0, kBuffer, 0)),
      -EINVAL);
  EXPECT_EQ(
      stopped.answer(fake::entering(SYS_timerfd_gettime, kTimerFd, kUnmapped)),
      -EFAULT);
}

TEST(TimerFdHandlers, ATickPastTheDeadlineMakesTheDescriptorReadable) {
  WithTimer stopped;
  const int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  ASSERT_GE(timer, 0);
  stopped.process.give_fd(kTimerFd, timer);
  ASSERT_EQ(stopped.settime({{1, 0}, {2, 0}}), 0);
  pollfd entry{timer, POLLIN, 0};
  EXPECT_EQ(poll(&entry, 1, 0), 0);
  stopped.environment.clock().advance(4s); // the deadline and one interval
  auto fired = stopped.environment.timers().fire_due(
      stopped.process, stopped.environment.clock());
  ASSERT_TRUE(fired) << fired.error().message;
  std::uint64_t expirations = 0;
  EXPECT_EQ(::read(timer, &expirations, sizeof expirations),
            static_cast<ssize_t>(sizeof expirations));
  EXPECT_EQ(expirations, 3U);
  EXPECT_EQ(as_duration(stopped.gettime().it_value), 1s);
  close(timer);
}

// --- Input waits ----------------------------------------------------------

constexpr int kFd = 3;

TEST(InputWaitHandlers, ReadOfAnEmptyPipeIsHeldUntilInput) {
  Stopped stopped;
  const Pipe pipe;
  stopped.process.give_fd(kFd, pipe.ends[0]);
  const auto regs = fake::entering(SYS_read, kFd, kBuffer, 16);
  const Action held = stopped.run(regs);
  ASSERT_EQ(held.kind, Action::Kind::kHold);
  EXPECT_FALSE(held.deadline);
  EXPECT_FALSE(held.result_at_deadline);
  ASSERT_NE(held.recheck, nullptr);
  const Syscall &read = *syscall_of(SYS_read);
  auto still = held.recheck(stopped.process, read, regs);
  ASSERT_TRUE(still);
  EXPECT_FALSE(*still);
  ASSERT_TRUE(pipe.send());
  auto over = held.recheck(stopped.process, read, regs);
  ASSERT_TRUE(over && *over);
  EXPECT_EQ((*over)->kind, Action::Kind::kRun);
}

TEST(InputWaitHandlers, ReadThatWouldNotBlockRuns) {
  Stopped stopped;
  const Pipe nonblocking(O_NONBLOCK);
  stopped.process.give_fd(kFd, nonblocking.ends[0]);
  EXPECT_EQ(stopped.run(fake::entering(SYS_read, kFd, kBuffer, 16)).kind,
            Action::Kind::kRun);
  const Pipe full;
  ASSERT_TRUE(full.send());
  stopped.process.give_fd(kFd, full.ends[0]);
  EXPECT_EQ(stopped.run(fake::entering(SYS_read, kFd, kBuffer, 16)).kind,
            Action::Kind::kRun);
  // A descriptor the target lacks: the kernel answers EBADF at once.
  EXPECT_EQ(stopped.run(fake::entering(SYS_read, 42, kBuffer, 16)).kind,
            Action::Kind::kRun);
}

TEST(InputWaitHandlers, PollTimeoutIsADeadlineOnTheVirtualClock) {
  Stopped stopped;
  const Pipe pipe;
  stopped.process.give_fd(kFd, pipe.ends[0]);
  stopped.process.put(kBuffer, pollfd{kFd, POLLIN, 0});
  stopped.environment.clock().advance(10s);
  const Action timed = stopped.run(fake::entering(SYS_poll, kBuffer, 1, 250));
  ASSERT_EQ(timed.kind, Action::Kind::kHold);
  EXPECT_EQ(timed.deadline, std::chrono::nanoseconds(10s + 250ms));
  EXPECT_FALSE(timed.result_at_deadline); // it is made to time out
  const Action forever = stopped.run(
      fake::entering(SYS_poll, kBuffer, 1, static_cast<std::uint64_t>(-1)));
  ASSERT_EQ(forever.kind, Action::Kind::kHold);
  EXPECT_FALSE(forever.deadline);
  EXPECT_EQ(stopped.run(fake::entering(SYS_poll, kBuffer, 1, 0)).kind,
            Action::Kind::kRun);
  ASSERT_TRUE(pipe.send());
  EXPECT_EQ(stopped.run(fake::entering(SYS_poll, kBuffer, 1, 250)).kind,
            Action::Kind::kRun);
}

TEST(InputWaitHandlers, ExpireZeroesAPollTimeout) {
  Stopped stopped;
  const auto regs = fake::entering(SYS_poll, kBuffer, 1, 250);
  ASSERT_TRUE(expire(stopped.process, *syscall_of(SYS_poll), regs));
  const auto &set = stopped.process.registers_of(stopped.process.pid());
  EXPECT_EQ(set.arg(2), 0U);
  EXPECT_EQ(set.arg(0), kBuffer);
}

TEST(InputWaitHandlers, EpollWaitIsHeldUntilARegisteredFdIsReady) {
  Stopped stopped;
  const Pipe pipe;
  const int epoll = epoll_create1(0);
  ASSERT_GE(epoll, 0);
  epoll_event event{EPOLLIN, {}};
  ASSERT_EQ(epoll_ctl(epoll, EPOLL_CTL_ADD, pipe.ends[0], &event), 0);
  constexpr int kEpoll = 7;
  stopped.process.give_fd(kEpoll, epoll);
  const auto regs = fake::entering(SYS_epoll_wait, kEpoll, kBuffer, 8,
                                   static_cast<std::uint64_t>(-1));
  EXPECT_EQ(stopped.run(regs).kind, Action::Kind::kHold);
  ASSERT_TRUE(pipe.send());
  EXPECT_EQ(stopped.run(regs).kind, Action::Kind::kRun);
  close(epoll);
}

TEST(InputWaitHandlers, WaitsOnNamesTheDescriptorsWaitedFor) {
  Stopped stopped;
  const std::array wanted{pollfd{3, POLLIN, 0}, pollfd{4, POLLIN, 0}};
  stopped.process.map(kBuffer, std::as_bytes(std::span(wanted)));
  const auto poll_regs = fake::entering(SYS_poll, kBuffer, 2, 0);
  const Syscall &poll_row = *syscall_of(SYS_poll);
  EXPECT_TRUE(*waits_on(stopped.process, poll_row, poll_regs, 4));
  EXPECT_FALSE(*waits_on(stopped.process, poll_row, poll_regs, 5));
  // An epoll instance's registrations, from its fdinfo.
  stopped.process.set_proc_file("fdinfo/7",
                                "pos:\t0\nflags:\t02\nmnt_id:\t15\n"
                                "tfd:        4 events:       19 data: 4\n");
  const auto epoll_regs = fake::entering(SYS_epoll_wait, 7, kOther, 8, 0);
  const Syscall &epoll_row = *syscall_of(SYS_epoll_wait);
  EXPECT_TRUE(*waits_on(stopped.process, epoll_row, epoll_regs, 4));
  EXPECT_FALSE(*waits_on(stopped.process, epoll_row, epoll_regs, 14));
  const Syscall &read_row = *syscall_of(SYS_read);
  EXPECT_TRUE(*waits_on(stopped.process, read_row,
                        fake::entering(SYS_read, 4, kOther, 1), 4));
}

// --- Threads ----------------------------------------------------------------

TEST(FutexHandlers, AWaitOnSeveralFutexesIsRefusedNotLeftToSleep) {
  // In the kernel it would sleep where cmc's scheduler cannot see it.
  Stopped stopped;
  const auto regs = fake::entering(SYS_futex_waitv, kBuffer, 2, 0, 0);
  const Syscall *call = syscall_of(SYS_futex_waitv);
  ASSERT_NE(call, nullptr);
  SeccompStop stop{stopped.process,      stopped.environment,       *call, regs,
                   stopped.listening_fd, stopped.unrestorable_calls};
  const auto action = call->handler(stop);
  ASSERT_FALSE(action);
  EXPECT_NE(action.error().message.find("futex_waitv"), std::string::npos);
}

// --- Processes --------------------------------------------------------------

TEST(ProcessHandlers, TheFirstProcessLeadsItsGroupAlready) {
  Stopped stopped;
  EXPECT_EQ(stopped.run(fake::entering(SYS_setsid)).kind, Action::Kind::kRun);
  EXPECT_EQ(stopped.run(fake::entering(SYS_setpgid, 0, 0)).kind,
            Action::Kind::kRun);
  EXPECT_TRUE(stopped.process.left().empty());
}

TEST(ProcessHandlers, AProcessLeavingTheGroupIsFollowedStill) {
  // vsftpd's process for a connection calls setsid: it runs, and the
  // process is followed outside the target's process group.
  Stopped stopped;
  const pid_t child = stopped.process.pid() + 1;
  stopped.process.adopt(child, child);
  stopped.process.focus(child);
  EXPECT_EQ(stopped.run(fake::entering(SYS_setsid)).kind, Action::Kind::kRun);
  EXPECT_EQ(stopped.process.left(), std::vector<pid_t>{child});
}

} // namespace
} // namespace cmc::tracer::handlers_test
