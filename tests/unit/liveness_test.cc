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
  kR13,
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

// The registers dead at the start when live_at_return are live at the
// return: all but kAllButStatusFlags by default, the ABI's registers when
// it returns into another file's code.
std::uint32_t dead(const Liveness &liveness,
                   std::uint32_t live_at_return = kAllButStatusFlags) {
  return kEveryRegister & ~live_given(liveness, live_at_return);
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
  EXPECT_EQ(dead(liveness, kAbiReturnLive),
            bits({kRax, kRcx, kR8, kR9, kR10, kR11, kStatusFlags}));
  // A caller in the same file may keep values in r8-r10 (-fipa-ra): only
  // what the kernel writes dies.
  EXPECT_EQ(dead(liveness), bits({kRax, kRcx, kR11, kStatusFlags}));
  EXPECT_EQ(liveness.return_slot, std::optional<std::int64_t>(0));
  EXPECT_EQ(liveness.red_zone_read, 0U);
  // The kernel reads the call's buffer through rsi.
  EXPECT_EQ(liveness.reach, std::optional<std::uint64_t>(0));
}

TEST(Liveness, ArgumentsOfThePendingCallStayLive) {
  const Liveness liveness = analyse({0xc3}, 6);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_EQ(dead(liveness), bits({kRax, kRcx, kR11, kStatusFlags}));
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
  EXPECT_EQ(dead(liveness) & bits({kR8}), 0U);
  EXPECT_NE(dead(liveness, kAbiReturnLive) & bits({kR9}), 0U);
  // dec leaves CF as it was and jnz reads ZF: the flags stay live.
  EXPECT_EQ(dead(liveness) & bits({kStatusFlags}), 0U);
}

TEST(Liveness, IndirectJumpKeepsEverythingLive) {
  // jmp rax
  const Liveness liveness = analyse({0xff, 0xe0}, 0);
  EXPECT_FALSE(liveness.analysed);
  EXPECT_EQ(dead(liveness), 0U);
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
  EXPECT_EQ(dead(liveness), 0U);
}

TEST(Liveness, CallKeepsWhatItsCallerReadsAfterAndItsFrame) {
  // sub rsp,16; call +0x10; mov rax,r10; add rsp,16; ret
  const Liveness liveness =
      analyse({0x48, 0x83, 0xec, 0x10, 0xe8, 0x10, 0x00, 0x00, 0x00, 0x4c, 0x89,
               0xd0, 0x48, 0x83, 0xc4, 0x10, 0xc3},
              0);
  ASSERT_TRUE(liveness.analysed);
  // r10 is read after the call, which may leave it as it is.
  EXPECT_EQ(dead(liveness) & bits({kR10}), 0U);
  EXPECT_NE(dead(liveness) & bits({kR11}), 0U);
  // The call reads its argument registers.
  EXPECT_EQ(dead(liveness) & bits({kRdi, kRsi, kRdx, kR8, kR9, kRbx, kR12}),
            0U);
  // The caller's frame below the wait's stack pointer survives the call.
  EXPECT_EQ(liveness.red_zone_read, 16U);
  // The call returns with rsp where it was: the return address is where
  // it was at the wait.
  EXPECT_EQ(liveness.return_slot, std::optional<std::int64_t>(0));
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

// The caller's code after a call returns: mov rdi,rax; sub rsp,8;
// call +0; add rsp,8; mov rax,r12; pop rbx; ret.
TEST(Liveness, CallerReadsWhatItKeepsAndPopsTheRest) {
  constexpr std::uint64_t kStart = kRip - 0x1000;
  std::string memory(0x2000, '\0');
  const std::string code("\x48\x89\xc7\x48\x83\xec\x08\xe8\x00\x00\x00\x00"
                         "\x48\x83\xc4\x08\x4c\x89\xe0\x5b\xc3",
                         21);
  memory.replace(kRip - kStart, code.size(), code);
  const MemoryReader read = [&](std::uint64_t address, std::size_t length) {
    if (address < kStart || address >= kStart + memory.size())
      return std::string();
    return memory.substr(address - kStart, length);
  };
  const Liveness liveness = analyse_return(read, kRip);
  ASSERT_TRUE(liveness.analysed);
  // rax (the callee's result) and r12 are read, rbx is popped: r13 lives
  // only if the caller's caller reads it, r10 passes the call.
  EXPECT_EQ(liveness.live & bits({kRax, kR12, kRbx}), bits({kRax, kR12}));
  EXPECT_EQ(dead(liveness) & bits({kRbx, kR13, kR10}), bits({kRbx}));
  EXPECT_EQ(dead(liveness, kAbiReturnLive) & bits({kR13, kR10, kRbx}),
            bits({kR10, kRbx}));
  // The return address is above the popped rbx.
  EXPECT_EQ(liveness.return_slot, std::optional<std::int64_t>(8));
}

} // namespace
} // namespace cmc::decoder
