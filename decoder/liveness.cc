#include "decoder/liveness.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "decoder/code_graph.h"
#include "decoder/stack_reads.h"

namespace cmc::decoder {
namespace {

using code::argument_bits;
using code::bit;
using code::Flow;
using code::Graph;
using code::kR8;
using code::kR9;
using code::kRax;
using code::kRcx;
using code::kRdi;
using code::kRdx;
using code::kRsi;
using code::kRsp;
using code::kSyscallWrites;
using code::Stack;
using code::Step;

// A call reads the argument registers, rax (the vector registers a
// variadic callee takes) and rsp. It is not taken to write the
// caller-saved ones: a compiler that sees the callee's body (GCC's
// -fipa-ra) keeps values in those the callee leaves alone.
constexpr std::uint32_t kCallReads = bit(kRdi) | bit(kRsi) | bit(kRdx) |
                                     bit(kRcx) | bit(kR8) | bit(kR9) |
                                     bit(kRax) | bit(kRsp);

// live_at_return: the registers live after a `ret`.
std::uint32_t live_in(const Step &step, std::uint32_t out,
                      std::uint32_t live_at_return) {
  switch (step.flow) {
  case Flow::kReturn:
    return step.reads | live_at_return;
  case Flow::kCall:
    return step.reads | kCallReads | out;
  case Flow::kSyscall:
    return step.reads | bit(kRax) | argument_bits(6) | (out & ~kSyscallWrites);
  default:
    return step.reads | (out & ~step.kills);
  }
}

// Backward dataflow to a fixpoint: the registers live before each
// instruction.
std::uint32_t live_registers(const Graph &graph, std::uint64_t rip,
                             std::uint32_t live_at_return) {
  std::map<std::uint64_t, std::uint32_t> live;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto &[address, step] : graph) {
      std::uint32_t out = 0;
      for (const std::uint64_t next : code::successors(step))
        out |= live[next];
      const std::uint32_t in = live_in(step, out, live_at_return);
      if (in != live[address]) {
        live[address] = in;
        changed = true;
      }
    }
  }
  return live[rip];
}

// rsp's offset from its value at start at every `ret` reachable from
// it; none when the offsets differ or rsp moves in a way not followed.
// A call returns with rsp where it was (the callee pops its return
// address).
std::optional<std::int64_t> return_slot(const Graph &graph,
                                        std::uint64_t start) {
  std::set<std::pair<std::uint64_t, std::int64_t>> seen;
  std::vector<std::pair<std::uint64_t, std::int64_t>> work{{start, 0}};
  std::optional<std::int64_t> slot;
  while (!work.empty()) {
    const auto [address, offset] = work.back();
    work.pop_back();
    if (!seen.emplace(address, offset).second)
      continue;
    if (seen.size() > code::kMaxInstructions)
      return std::nullopt;
    const Step &step = graph.at(address);
    if (step.flow == Flow::kReturn) {
      if (slot && *slot != offset)
        return std::nullopt;
      slot = offset;
      continue;
    }
    if (step.flow != Flow::kCall && step.stack == Stack::kUnknown)
      return std::nullopt;
    const std::int64_t next_offset =
        offset + (step.flow == Flow::kCall ? 0 : step.stack_delta);
    for (const std::uint64_t next : code::successors(step))
      work.emplace_back(next, next_offset);
  }
  return slot;
}

// The code's registers, return slot and stack reads (after_call: as
// stack_reads), or nothing when it cannot be followed.
bool analyse_code(code::Code &code, std::uint64_t start, bool after_call,
                  const code::NoReturn &no_return, Liveness &liveness) {
  const Graph graph = code::build_graph(code, start, no_return);
  if (graph.empty())
    return false;
  liveness.analysed = true;
  liveness.live = live_registers(graph, start, 0) | bit(kRsp);
  liveness.passed = live_registers(graph, start, kEveryRegister) | bit(kRsp);
  liveness.return_slot = return_slot(graph, start);
  liveness.returns =
      std::any_of(graph.begin(), graph.end(), [](const auto &at) {
        return at.second.flow == Flow::kReturn;
      });
  const StackReads reads =
      stack_reads(graph, start, after_call, liveness.return_slot);
  liveness.stack_live = reads.live;
  if (!reads.live)
    return true;
  const auto lowest = reads.live->lowest();
  liveness.red_zone_read =
      lowest && *lowest < 0
          ? std::min(kRedZone, static_cast<std::uint64_t>(-*lowest))
          : 0;
  liveness.reach = reads.reach;
  liveness.reach_above = reads.reach_above;
  return true;
}

} // namespace

Liveness analyse_liveness(const MemoryReader &read, std::uint64_t rip,
                          int arguments, const code::NoReturn &no_return) {
  code::Code code(read, rip);
  Liveness liveness;
  // int 0x80 and sysenter enter the kernel's 32-bit calls, which take
  // other registers and keep rcx and r11.
  const bool analysed = code.at(rip - 2).starts_with("\x0f\x05") &&
                        analyse_code(code, rip, false, no_return, liveness);
  liveness.code = code.take();
  if (!analysed)
    return liveness;
  // The kernel writes rax, rcx and r11 when the call returns, and reads
  // the call's arguments first (a pointer among them makes what it points at
  // live).
  liveness.live = (liveness.live & ~kSyscallWrites) | argument_bits(arguments);
  liveness.passed &= ~kSyscallWrites;
  if (arguments > 0 && liveness.stack_live)
    liveness.reach = liveness.reach.value_or(0);
  return liveness;
}

Liveness analyse_return(const MemoryReader &read, std::uint64_t address,
                        const code::NoReturn &no_return) {
  code::Code code(read, address);
  Liveness liveness;
  analyse_code(code, address, true, no_return, liveness);
  liveness.code = code.take();
  return liveness;
}

user_regs_struct without_dead(const user_regs_struct &registers,
                              std::uint32_t dead) {
  // In x86_register's order.
  static constexpr std::array<unsigned long long user_regs_struct::*, 16>
      kFields{&user_regs_struct::rax, &user_regs_struct::rbx,
              &user_regs_struct::rcx, &user_regs_struct::rdx,
              &user_regs_struct::rsi, &user_regs_struct::rdi,
              &user_regs_struct::rbp, &user_regs_struct::rsp,
              &user_regs_struct::r8,  &user_regs_struct::r9,
              &user_regs_struct::r10, &user_regs_struct::r11,
              &user_regs_struct::r12, &user_regs_struct::r13,
              &user_regs_struct::r14, &user_regs_struct::r15};
  user_regs_struct live = registers;
  for (std::size_t i = 0; i < kFields.size(); ++i)
    if ((dead & bit(static_cast<int>(i))) != 0 && i != kRsp)
      live.*kFields[i] = 0;
  if ((dead & bit(kStatusFlags)) != 0)
    live.eflags &= ~kStatusFlagBits;
  return live;
}

} // namespace cmc::decoder
