// The liveness of a waiting thread's registers and red zone, on
// hand-assembled x86-64 code (the bytes after a `syscall`).
#include "decoder/liveness.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
MemoryReader memory_with(std::string_view before,
                         std::initializer_list<unsigned char> code) {
  constexpr std::uint64_t kStart = kRip - 0x1000;
  std::string memory(0x2000, '\0');
  memory.replace(kRip - kStart - before.size(), before.size(), before);
  memory.replace(kRip - kStart, code.size(),
                 std::string(code.begin(), code.end()));
  return [memory](std::uint64_t address, std::size_t length) {
    if (address < kStart || address >= kStart + memory.size())
      return std::string();
    return memory.substr(address - kStart, length);
  };
}

Liveness analyse_after(std::string_view before,
                       std::initializer_list<unsigned char> code,
                       int arguments) {
  return analyse_liveness(memory_with(before, code), kRip, arguments);
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
}

TEST(Liveness, ReadThroughACopyOfRspIsFollowed) {
  // mov rbx,rsp; mov rax,[rbx-16]; ret
  const Liveness liveness =
      analyse({0x48, 0x89, 0xe3, 0x48, 0x8b, 0x43, 0xf0, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  // From the address rbx-16 up, whatever the read's size: the red zone's
  // lowest 112 bytes are dead.
  EXPECT_EQ(liveness.red_zone_read, 16U);
}

// The caller's code after a call returns: mov rdi,rax; sub rsp,8;
// call +0; add rsp,8; mov rax,r12; pop rbx; ret.
TEST(Liveness, CallerReadsWhatItKeepsAndPopsTheRest) {
  const Liveness liveness = analyse_return(
      memory_with("", {0x48, 0x89, 0xc7, 0x48, 0x83, 0xec, 0x08,
                       0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0x83,
                       0xc4, 0x08, 0x4c, 0x89, 0xe0, 0x5b, 0xc3}),
      kRip);
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

// The stack bytes live at the start, as [from, to) offsets from rsp.
std::vector<std::pair<std::int64_t, std::int64_t>>
stack_live(const Liveness &liveness) {
  EXPECT_TRUE(liveness.stack_live.has_value());
  return liveness.stack_live
             ? liveness.stack_live->spans()
             : std::vector<std::pair<std::int64_t, std::int64_t>>{};
}

constexpr std::int64_t kEnd = StackBytes::kEnd;
using Spans = std::vector<std::pair<std::int64_t, std::int64_t>>;

TEST(StackLiveness, ASlotWrittenBeforeItIsReadIsDead) {
  // mov [rsp+16],rax; mov rdi,[rsp+16]; ret
  const Liveness liveness = analyse(
      {0x48, 0x89, 0x44, 0x24, 0x10, 0x48, 0x8b, 0x7c, 0x24, 0x10, 0xc3}, 0);
  EXPECT_EQ(stack_live(liveness), (Spans{{0, 8}})); // the return address
}

TEST(StackLiveness, ASlotReadBeforeItIsWrittenIsLive) {
  // mov rdi,[rsp+16]; mov [rsp+16],rax; ret
  const Liveness liveness = analyse(
      {0x48, 0x8b, 0x7c, 0x24, 0x10, 0x48, 0x89, 0x44, 0x24, 0x10, 0xc3}, 0);
  EXPECT_EQ(stack_live(liveness), (Spans{{0, 8}, {16, 24}}));
}

TEST(StackLiveness, AnAddressACallGetsKeepsWhatLiesAtAndAboveIt) {
  // Where a call returns: lea rdi,[rsp+32]; call +0; ret
  const Liveness liveness =
      analyse_return(memory_with("", {0x48, 0x8d, 0x7c, 0x24, 0x20, 0xe8, 0x00,
                                      0x00, 0x00, 0x00, 0xc3}),
                     kRip);
  EXPECT_EQ(stack_live(liveness), (Spans{{0, 8}, {32, kEnd}}));
}

TEST(StackLiveness, AnAddressKeptInASlotIsFollowed) {
  // lea rax,[rsp+48]; mov [rsp+8],rax; mov rdi,[rsp+8]; call +0; ret,
  // where a call returns.
  const Liveness liveness = analyse_return(
      memory_with("", {0x48, 0x8d, 0x44, 0x24, 0x30, 0x48, 0x89,
                       0x44, 0x24, 0x08, 0x48, 0x8b, 0x7c, 0x24,
                       0x08, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3}),
      kRip);
  EXPECT_EQ(stack_live(liveness), (Spans{{0, 8}, {48, kEnd}}));
}

TEST(StackLiveness, StackArgumentsAreWrittenAfterTheLastCall) {
  // sub rsp,16; call +0; add rsp,16; ret: where a call returns its next
  // call's stack arguments are written after; after the wait the call
  // may read the frame below the return address (the red zone here).
  const std::initializer_list<unsigned char> code{0x48, 0x83, 0xec, 0x10, 0xe8,
                                                  0x00, 0x00, 0x00, 0x00, 0x48,
                                                  0x83, 0xc4, 0x10, 0xc3};
  EXPECT_EQ(stack_live(analyse_return(memory_with("", code), kRip)),
            (Spans{{0, 8}}));
  EXPECT_EQ(stack_live(analyse(code, 0)), (Spans{{-16, 8}}));
}

TEST(StackLiveness, ASystemCallMayReadTheStackAboveRsp) {
  // glibc's __restore_rt, where a signal handler returns: mov rax,15
  // (rt_sigreturn, which reads the signal frame); syscall
  const Liveness liveness =
      analyse_return(memory_with("", {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00,
                                      0x0f, 0x05, 0xc3}),
                     kRip);
  EXPECT_EQ(stack_live(liveness), (Spans{{0, kEnd}}));
}

TEST(StackLiveness, AnIndexThroughRspKeepsEverything) {
  // mov rax,[rsp+rcx*8]; ret
  const Liveness liveness = analyse({0x48, 0x8b, 0x04, 0xcc, 0xc3}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_FALSE(liveness.stack_live);
  EXPECT_EQ(liveness.red_zone_read, kRedZone);
}

TEST(StackLiveness, ALoopThatNeverReturnsReadsNothingAbove) {
  // again: jmp again
  const Liveness liveness = analyse({0xeb, 0xfe}, 0);
  ASSERT_TRUE(liveness.analysed);
  EXPECT_FALSE(liveness.returns);
  EXPECT_EQ(stack_live(liveness), Spans{});
}

// A switch as GCC compiles it: cmp eax,2; ja default; mov eax,eax;
// lea rdx,[rip+table]; movsxd rax,[rdx+rax*4]; add rax,rdx; jmp rax;
// default: ret; case 0: mov rax,r12; ret; case 1: ret; case 2: ret;
// table (at 32): -8, -4, -3.
std::initializer_list<unsigned char> switch_code(bool bounded) {
  static constexpr std::initializer_list<unsigned char> kBounded{
      0x83, 0xf8, 0x02, 0x77, 0x12, 0x89, 0xc0, 0x48, 0x8d, 0x15, 0x12,
      0x00, 0x00, 0x00, 0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff,
      0xe0, 0xc3, 0x4c, 0x89, 0xe0, 0xc3, 0xc3, 0xc3, 0x90, 0x90, 0xf8,
      0xff, 0xff, 0xff, 0xfc, 0xff, 0xff, 0xff, 0xfd, 0xff, 0xff, 0xff};
  // The same with the cmp a nop (0f 1f 00): the index is not bounded.
  static constexpr std::initializer_list<unsigned char> kUnbounded{
      0x0f, 0x1f, 0x00, 0x77, 0x12, 0x89, 0xc0, 0x48, 0x8d, 0x15, 0x12,
      0x00, 0x00, 0x00, 0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff,
      0xe0, 0xc3, 0x4c, 0x89, 0xe0, 0xc3, 0xc3, 0xc3, 0x90, 0x90, 0xf8,
      0xff, 0xff, 0xff, 0xfc, 0xff, 0xff, 0xff, 0xfd, 0xff, 0xff, 0xff};
  return bounded ? kBounded : kUnbounded;
}

TEST(Liveness, ASwitchsTableIsFollowed) {
  const Liveness liveness = analyse(switch_code(true), 0);
  ASSERT_TRUE(liveness.analysed);
  // Case 0 reads r12 (the index is the call's result, in rax).
  EXPECT_EQ(dead(liveness) & bits({kR12}), 0U);
  EXPECT_NE(dead(liveness, kAbiReturnLive) & bits({kR10}), 0U);
}

TEST(Liveness, AJumpThroughAnUnboundedIndexKeepsEverything) {
  const Liveness liveness = analyse(switch_code(false), 0);
  EXPECT_FALSE(liveness.analysed);
}

// call +0x10 (a function that never returns); then bytes that do not
// decode: ud2.
TEST(Liveness, TheCodeAfterACallThatNeverReturnsIsNotFollowed) {
  const std::initializer_list<unsigned char> code{0xe8, 0x10, 0x00, 0x00,
                                                  0x00, 0x0f, 0x0b};
  EXPECT_FALSE(analyse(code, 0).analysed);
  const Liveness liveness = analyse_liveness(
      memory_with("\x0f\x05", code), kRip, 0,
      [](std::uint64_t function) { return function == kRip + 0x15; });
  ASSERT_TRUE(liveness.analysed);
  EXPECT_FALSE(liveness.returns);
}

} // namespace
} // namespace cmc::decoder
