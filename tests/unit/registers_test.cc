// Registers names the fields of user_regs_struct by the x86-64 system-call
// ABI and by what rdtsc returns; a RemotePtr from an argument reads and
// writes its T in the target (here a scripted one).

#include "tracer/process/registers.h"

#include <sys/syscall.h>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <ctime>

#include "fake_process.h"

namespace cmc::tracer::registers_test {
namespace {

TEST(Registers, ArgumentsFollowTheSyscallAbi) {
  user_regs_struct raw{};
  raw.rdi = 1;
  raw.rsi = 2;
  raw.rdx = 3;
  raw.r10 = 4;
  raw.r8 = 5;
  raw.r9 = 6;
  raw.rcx = 99; // a function's fourth argument, not a system call's
  Registers regs(raw);
  EXPECT_EQ(regs.args(), (std::array<std::uint64_t, 6>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(regs.arg(3), 4U);
  regs.set_arg(3, 40);
  EXPECT_EQ(regs.raw().r10, 40U);
  EXPECT_EQ(regs.raw().rcx, 99U);
}

TEST(Registers, TheNumberEnteredIsOrigRax) {
  user_regs_struct raw{};
  raw.orig_rax = SYS_futex;
  raw.rax = static_cast<std::uint64_t>(-ENOSYS);
  Registers regs(raw);
  EXPECT_EQ(regs.syscall_number(), SYS_futex);
  regs.set_syscall_number(-1);
  EXPECT_EQ(regs.raw().orig_rax, static_cast<std::uint64_t>(-1));
  EXPECT_EQ(regs.syscall_number(), -1);
}

TEST(Registers, TheResultIsSignedRax) {
  Registers regs;
  regs.set_result(-EAGAIN);
  EXPECT_EQ(regs.raw().rax, static_cast<std::uint64_t>(-EAGAIN));
  EXPECT_EQ(regs.result(), -EAGAIN);
}

TEST(Registers, ASyscallSiteIsTwoBytesBeforeTheStop) {
  user_regs_struct raw{};
  raw.rip = 0x401002;
  raw.orig_rax = SYS_read;
  const Registers at_stop(raw);
  EXPECT_EQ(at_stop.syscall_site(), 0x401000U);
  // Entering the same call again: back on its instruction, the number
  // where the instruction takes it.
  Registers again = at_stop;
  again.set_to_enter(at_stop.syscall_site(), at_stop.syscall_number());
  EXPECT_EQ(again.ip(), 0x401000U);
  EXPECT_EQ(again.raw().rax, static_cast<std::uint64_t>(SYS_read));
}

TEST(Registers, TheTscSplitsIntoEdxEax) {
  user_regs_struct raw{};
  raw.rax = ~std::uint64_t{0};
  raw.rdx = ~std::uint64_t{0};
  raw.rcx = 7;
  Registers regs(raw);
  regs.set_tsc(0x1122334455667788);
  EXPECT_EQ(regs.raw().rax, 0x55667788U);
  EXPECT_EQ(regs.raw().rdx, 0x11223344U);
  EXPECT_EQ(regs.raw().rcx, 7U); // rdtsc leaves rcx
  regs.set_tsc_aux(0);
  EXPECT_EQ(regs.raw().rcx, 0U);
}

TEST(RemotePtr, AnArgumentPointsIntoTheTarget) {
  constexpr std::uint64_t kRequest = 0x10000;
  constexpr std::uint64_t kRemaining = 0x10010;
  fake::ScriptedProcess process;
  process.map(kRequest, 2 * sizeof(timespec));
  process.put(kRequest, timespec{3, 500});
  const Registers regs = fake::entering(SYS_nanosleep, kRequest, kRemaining);
  const RemotePtr<timespec> request = regs.arg_ptr<timespec>(0);
  EXPECT_EQ(request.address(), kRequest);
  EXPECT_FALSE(request.is_null());
  EXPECT_TRUE(regs.arg_ptr<timespec>(2).is_null());
  auto read = process.read(request);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->tv_sec, 3);
  EXPECT_EQ(read->tv_nsec, 500);
  ASSERT_TRUE(process.write(regs.arg_ptr<timespec>(1), timespec{1, 2}));
  EXPECT_EQ(process.at<timespec>(kRemaining).tv_sec, 1);
  EXPECT_EQ(process.at<timespec>(kRemaining).tv_nsec, 2);
}

TEST(RemotePtr, AnAddressNotMappedFails) {
  fake::ScriptedProcess process;
  // The T must fit where it points: half a timespec is mapped.
  process.map(0x20000, sizeof(timespec) / 2);
  const auto word = process.read(RemotePtr<std::uint32_t>(0x90000));
  ASSERT_FALSE(word);
  EXPECT_EQ(word.error().error_number, EFAULT);
  EXPECT_FALSE(process.read(RemotePtr<timespec>(0x20000)));
  EXPECT_FALSE(process.write(RemotePtr<timespec>(0x20000), timespec{}));
}

} // namespace
} // namespace cmc::tracer::registers_test
