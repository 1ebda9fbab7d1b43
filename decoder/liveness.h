#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoder/syscall_format.h"

namespace cmc::decoder {

// The red zone: the System V x86-64 ABI lets a function keep 128 bytes
// below its stack pointer without moving it.
inline constexpr std::uint64_t kRedZone = 128;

// Bits of Liveness::dead: the general-purpose registers by their
// x86_register number (rax 0, rbx 1, rcx 2, rdx 3, rsi 4, rdi 5, rbp 6,
// rsp 7, r8 8 ... r15 15), and the six status flags of eflags.
inline constexpr int kStatusFlags = 16;
// CF, PF, AF, ZF, SF, OF in eflags.
inline constexpr std::uint64_t kStatusFlagBits = 0x8d5;

// What the code a thread waits in may read before it writes it, from the
// instruction after a `syscall` (rip) to the return of its function, by
// a dataflow analysis of that code. Whatever it cannot prove dead is live.
struct Liveness {
  // false: the analysis gave up (an indirect jump, code it cannot read or
  // decode, too much code): every register and byte is live.
  bool analysed = false;
  // Registers (and status flags) no execution reads before writing them.
  // Whoever called the function: only what the code after the wait (or
  // the kernel) writes before reading it, and the status flags at its
  // return. A caller in the same file may keep values in caller-saved
  // registers the function leaves alone (GCC's -fipa-ra).
  std::uint32_t dead = 0;
  // When the function returns to code of another file, which cannot know
  // what it leaves alone: the System V ABI's caller-saved registers die
  // at the return too.
  std::uint32_t dead_returning_elsewhere = 0;
  // Where the return address is at every `ret` of the code: its offset
  // from the stack pointer at the wait (none when the paths disagree or
  // lose track of rsp).
  std::optional<std::int64_t> return_slot;
  // The bytes just below the stack pointer the code may read through it:
  // [rsp - red_zone_read, rsp) is live, the rest of the red zone dead.
  std::uint64_t red_zone_read = kRedZone;
  // The code (or a call it makes, or the kernel for a system call) reads
  // memory through a pointer it did not compute from rsp: a register's
  // value at the wait or a word loaded from memory, at most reach bytes
  // away from it. The red zone is live if a register or a word of the
  // process holds an address within reach of it (RedZoneWindow; within 0
  // of it when there is no such read: the caller after the return,
  // another thread or a signal handler may read through such a pointer).
  std::optional<std::uint64_t> reach;
  // The code read, to tell whether a cached result still holds: pages
  // (their address, less rip's page) and their bytes.
  std::vector<std::pair<std::int64_t, std::string>> code;
};

// The liveness at a thread waiting at rip (just after its `syscall`; after
// anything else everything is live) in a system call that reads its first
// `arguments` argument registers (rdi, rsi, rdx, r10, r8, r9).
[[nodiscard]] Liveness analyse_liveness(const MemoryReader &read,
                                        std::uint64_t rip, int arguments);

// Addresses a pointer may hold for the red zone below rsp to be live
// under liveness.reach: [start, end).
struct RedZoneWindow {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  [[nodiscard]] bool holds(std::uint64_t value) const {
    return value - start < end - start;
  }
};
[[nodiscard]] RedZoneWindow red_zone_window(const Liveness &liveness,
                                            std::uint64_t rsp);

// The registers with the dead ones (Liveness::dead) zero, the status
// flags cleared in eflags when they are dead.
[[nodiscard]] user_regs_struct without_dead(const user_regs_struct &registers,
                                            std::uint32_t dead);

} // namespace cmc::decoder
