// The liveness of a waiting thread's registers and red zone, on
// hand-assembled x86-64 code (the bytes after a `syscall`).
#include "decoder/liveness.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace cmc::decoder {
namespace {

constexpr std::uint64_t kRip = 0x401000;

// Register numbers (x86_register) in Liveness::dead.
enum : int {
  kRax,
  kRbx,
  kRcx,
  kRdx,
  kRsi,
  kRdi,
  kRbp,
  kRsp,
  kR8,
  kR9,
  kR10,
  kR11,
  kR12,
};

std::uint32_t bits(std::initializer_list<int> registers) {
  std::uint32_t mask = 0;
  for (const int index : registers)
    mask |= std::uint32_t{1} << index;
  return mask;
}

// Two pages of memory, zero but for the instruction before kRip and code
// at kRip; nothing readable around them.
Liveness analyse_after(std::string_view before,
                       std::initializer_list<unsigned char> code,
                       int arguments) {
  constexpr std::uint64_t kStart = kRip - 0x1000;
  std::string memory(0x2000, '\0');
  memory.replace(kRip - kStart - before.size(), before.size(), before);
  memory.replace(kRip - kStart, code.size(),
                 std::string(code.begin(), code.end()));
  const MemoryReader read = [&](std::uint64_t address, std::size_t length) {
    if (address < kStart || address >= kStart + memory.size())
      return std::string();
    return memory.substr(address - kStart, length);
  };
  return analyse_liveness(read, kRip, arguments);
}

Liveness analyse(std::initializer_list<unsigned char> code, int arguments) {
  return analyse_after("\x0f\x05", code, arguments); // syscall
}

// glibc's read(): syscall; cmp rax,-4096; ja error; ret; error: mov rax,-1;
// ret.
TEST(Liveness, ReadWrapperLeavesCallerSavedRegistersDead) {
  const Liveness liveness = analyse({0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, // cmp
                                     0x77, 0x01,                         // ja
                                     0xc3,                               // ret
                                     0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff,
                                     0xff, // mov rax,-1
                                     0xc3},
                                    3);
  ASSERT_TRUE(liveness.analysed);
  // Returning into another file's code the ABI holds: caller-saved
  // registers die at the return.
  EXPECT_EQ(liveness.dead_returning_elsewhere,
            bits({kRax, kRcx, kR8, kR9, kR10, kR11, kStatusFlags}));
  // A caller in the same file may keep values in r8-r10 (-fipa-ra): only
  // what the kernel writes dies.
  EXPECT_EQ(liveness.dead, bits({kRax, kRcx, kR11, kStatusFlags}));
  EXPECT_EQ(liveness.return_slot, std::optional<std::int64_t>(0));
  EXPECT_EQ(liveness.red_zone_read, 0U);
  // The kernel reads the call's buffer through rsi.
  EXPECT_EQ(liveness.reach, std::optional<std::uint64_t>(0));
}

TEST(Liveness, ArgumentsOfThePendingCallStayLive) {
  const Liveness liveness = analyse({0xc3}, 6);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(liveness.dead, bits({kRax, kRcx, kR11, kStatusFlags}));
}

TEST(Liveness, RedZoneReadAfterTheSyscallIsLive) {
  // mov rax,[rsp-8]; ret
  const Liveness liveness = analyse({0x48, 0x8b, 0x44, 0x24, 0xf8, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(liveness.red_zone_read, 8U);
  EXPECT_FALSE(liveness.reach);
}

TEST(Liveness, PopBelowTheWaitReadsTheRedZone) {
  // sub rsp,16; pop rax; pop rax; ret
  const Liveness liveness =
      analyse({0x48, 0x83, 0xec, 0x10, 0x58, 0x58, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(liveness.red_zone_read, 16U);
  EXPECT_EQ(liveness.return_slot, std::optional<std::int64_t>(0));
}

TEST(Liveness, LoopReachesAFixpoint) {
  // again: dec r8; jnz again; ret
  const Liveness liveness = analyse({0x49, 0xff, 0xc8, 0x75, 0xfb, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(liveness.dead & bits({kR8}), 0U);
  EXPECT_NE(liveness.dead_returning_elsewhere & bits({kR9}), 0U);
  // dec leaves CF as it was and jnz reads ZF: the flags stay live.
  EXPECT_EQ(liveness.dead & bits({kStatusFlags}), 0U);
}

TEST(Liveness, IndirectJumpKeepsEverythingLive) {
  // jmp rax
  const Liveness liveness = analyse({0xff, 0xe0}, 0);
  EXPECT_FALSE(liveness.analysed);
  EXPECT_EQ(liveness.dead, 0U);
  EXPECT_EQ(liveness.red_zone_read, kRedZone);
}

TEST(Liveness, UnreadableCodeKeepsEverythingLive) {
  // ja to the end of the readable memory
  const Liveness liveness =
      analyse({0x0f, 0x87, 0xfa, 0x0f, 0x00, 0x00, 0xc3}, 0);
  EXPECT_FALSE(liveness.analysed);
  EXPECT_EQ(liveness.red_zone_read, kRedZone);
}

TEST(Liveness, AfterInt80EverythingIsLive) {
  // int 0x80 keeps rcx and r11: ret
  const Liveness liveness = analyse_after("\xcd\x80", {0xc3}, 0);
  EXPECT_FALSE(liveness.analysed);
  EXPECT_EQ(liveness.dead, 0U);
}

TEST(Liveness, CallKeepsWhatItsCallerReadsAfterAndItsFrame) {
  // sub rsp,16; call +0x10; mov rax,r10; add rsp,16; ret
  const Liveness liveness =
      analyse({0x48, 0x83, 0xec, 0x10, 0xe8, 0x10, 0x00, 0x00, 0x00, 0x4c, 0x89,
               0xd0, 0x48, 0x83, 0xc4, 0x10, 0xc3},
              0);
  ASSERT_TRUE(liveness.analysed);
  // r10 is read after the call, which may leave it as it is.
  EXPECT_EQ(liveness.dead & bits({kR10}), 0U);
  EXPECT_NE(liveness.dead & bits({kR11}), 0U);
  // The call reads its argument registers.
  EXPECT_EQ(liveness.dead & bits({kRdi, kRsi, kRdx, kR8, kR9, kRbx, kR12}), 0U);
  // The caller's frame below the wait's stack pointer survives the call.
  EXPECT_EQ(liveness.red_zone_read, 16U);
  // The walk does not follow the call: where the return address is, is
  // not known.
  EXPECT_FALSE(liveness.return_slot);
}

TEST(Liveness, ReadThroughAPointerDependsOnTheProcess) {
  // mov rax,[rbx-16]; ret
  const Liveness liveness = analyse({0x48, 0x8b, 0x43, 0xf0, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(liveness.red_zone_read, 0U);
  EXPECT_EQ(liveness.reach, std::optional<std::uint64_t>(16));
  const RedZoneWindow window = red_zone_window(liveness, 0x7fff0000);
  EXPECT_TRUE(window.holds(0x7fff0000 - 128 - 16));
  EXPECT_TRUE(window.holds(0x7fff0000 + 15));
  EXPECT_FALSE(window.holds(0x7fff0000 + 16));
}

TEST(Liveness, ReadThroughACopyOfRspKeepsTheRedZone) {
  // mov rbx,rsp; mov rax,[rbx-16]; ret
  const Liveness liveness =
      analyse({0x48, 0x89, 0xe3, 0x48, 0x8b, 0x43, 0xf0, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(liveness.red_zone_read, kRedZone);
}

} // namespace
} // namespace cmc::decoder
