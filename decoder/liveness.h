#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoder/code_graph.h"
#include "decoder/stack_bytes.h"
#include "decoder/syscall_format.h"

namespace cmc::decoder {

// The red zone: the System V x86-64 ABI lets a function keep 128 bytes
// below its stack pointer without moving it.
inline constexpr std::uint64_t kRedZone = 128;

// Bits of Liveness::live: the general-purpose registers by their
// x86_register number (rax 0, rbx 1, rcx 2, rdx 3, rsi 4, rdi 5, rbp 6,
// rsp 7, r8 8 ... r15 15), and the six status flags of eflags.
inline constexpr int kStatusFlags = 16;
// CF, PF, AF, ZF, SF, OF in eflags.
inline constexpr std::uint64_t kStatusFlagBits = 0x8d5;

// Every general register and the status flags.
inline constexpr std::uint32_t kEveryRegister =
    (std::uint32_t{1} << (kStatusFlags + 1)) - 1;
// Every general register but the status flags: live at a return whose
// caller's code cmc cannot follow.
inline constexpr std::uint32_t kAllButStatusFlags =
    (std::uint32_t{1} << kStatusFlags) - 1;
// What the System V ABI keeps live at a return into another file's code,
// which cannot know what the function leaves alone: the return values
// (rax, rdx), rsp and the callee-saved registers (rbx, rbp, r12-r15).
inline constexpr std::uint32_t kAbiReturnLive = 0xf0cb;

// What code may read before writing it, from where it starts (the
// instruction after a waiting thread's `syscall`, or the return address a
// function returns to) to the return of its function, by a dataflow
// analysis of that code. Whatever it cannot prove dead is live.
struct Liveness {
  // false: the analysis gave up (an indirect jump, code it cannot read or
  // decode, too much code): every register and byte is live.
  bool analysed = false;
  // Registers (and status flags, bits as above) live at the start
  // whatever is live at the return, and those live at the start when
  // live at the return (live_given).
  std::uint32_t live = kEveryRegister;
  std::uint32_t passed = kEveryRegister;
  // Where the return address is at every `ret` of the code: its offset
  // from the stack pointer at the start (none when the paths disagree or
  // lose track of rsp). A call is taken to return with rsp where it was.
  std::optional<std::int64_t> return_slot;
  // false: no `ret` is reachable, the function never returns (what lies
  // above its frame is read only through pointers).
  bool returns = true;
  // The stack bytes the code may read before writing them, as offsets
  // from rsp at the start (stack_reads); none: every byte.
  std::optional<StackBytes> stack_live;
  // The bytes just below the stack pointer the code may read through it:
  // [rsp - red_zone_read, rsp) is live, the rest of the red zone dead.
  std::uint64_t red_zone_read = kRedZone;
  // The code (or a call it makes, or the kernel for a system call) reads
  // memory through a pointer it did not compute from rsp: a register's
  // value at the wait or a word loaded from memory, at most reach bytes
  // away from it. The red zone is live if a register or a word of the
  // process holds an address within reach of it (tracer::ThreadLiveness; within
  // 0 of it when there is no such read: the caller after the return, another
  // thread or a signal handler may read through such a pointer).
  std::optional<std::uint64_t> reach;
  // And above such a pointer.
  std::uint64_t reach_above = 0;
  // The code read, to tell whether a cached result still holds: pages
  // (their address, less rip's page) and their bytes.
  std::vector<std::pair<std::int64_t, std::string>> code;
};

// The liveness at a thread waiting at rip (just after its `syscall`; after
// anything else everything is live) in a system call that reads its first
// `arguments` argument registers (rdi, rsi, rdx, r10, r8, r9).
// no_return: which called functions never return (code_graph.h).
[[nodiscard]] Liveness analyse_liveness(const MemoryReader &read,
                                        std::uint64_t rip, int arguments,
                                        const code::NoReturn &no_return = {});

// The registers and stack bytes live where a function returns to (its
// caller's code at the return address).
[[nodiscard]] Liveness analyse_return(const MemoryReader &read,
                                      std::uint64_t address,
                                      const code::NoReturn &no_return = {});

// The registers live at the start of the code when live_at_return are
// live at the returns of its function.
[[nodiscard]] inline std::uint32_t live_given(const Liveness &liveness,
                                              std::uint32_t live_at_return) {
  return liveness.live | (live_at_return & liveness.passed);
}

// The registers with the dead ones (ThreadImage::dead) zero, the status
// flags cleared in eflags when they are dead.
[[nodiscard]] user_regs_struct without_dead(const user_regs_struct &registers,
                                            std::uint32_t dead);

} // namespace cmc::decoder
