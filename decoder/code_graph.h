#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "decoder/syscall_format.h"

// The code a waiting thread runs next, as the liveness analyses see it:
// each instruction's registers, memory operands, effect on rsp and
// control flow, decoded by Capstone from the process's memory.
namespace cmc::decoder::code {

inline constexpr std::size_t kMaxInstructions = 4096;
inline constexpr std::uint64_t kPage = 4096;

constexpr std::uint32_t bit(int index) { return std::uint32_t{1} << index; }
// Register numbers as x86_register gives them; bit 16 the status flags.
inline constexpr int kRax = 0;
inline constexpr int kRbx = 1;
inline constexpr int kRcx = 2;
inline constexpr int kRdx = 3;
inline constexpr int kRsi = 4;
inline constexpr int kRdi = 5;
inline constexpr int kRsp = 7;
inline constexpr int kR8 = 8;
inline constexpr int kR9 = 9;
inline constexpr int kR10 = 10;
inline constexpr int kR11 = 11;
inline constexpr int kRegisters = 16;
inline constexpr int kFlags = 16;
// The kernel's system call arguments, in order.
inline constexpr std::array<int, 6> kArguments{kRdi, kRsi, kRdx,
                                               kR10, kR8,  kR9};
// What the kernel writes at a system call's return: the result, and the
// return address and flags the `syscall` instruction saved.
inline constexpr std::uint32_t kSyscallWrites =
    bit(kRax) | bit(kRcx) | bit(kR11);
// The first count system call argument registers.
[[nodiscard]] std::uint32_t argument_bits(int count);

enum class Flow { kNext, kJump, kBranch, kCall, kReturn, kSyscall };
enum class Stack { kKeep, kMove, kUnknown };

// A memory operand: base + index + displacement (base or index -1 when
// it is not a general register: rip, an absolute address, a segment
// base), size bytes.
struct Access {
  int base = -1;
  int index = -1;
  std::int64_t displacement = 0;
  bool segment = false; // fs: or gs:, whose bases are registers
  std::uint32_t size = 0;
};

// What the analyses need of one instruction.
struct Step {
  std::uint64_t next = 0; // the address after it
  Flow flow = Flow::kNext;
  std::uint64_t target = 0; // of a direct jump or branch
  std::uint32_t reads = 0;  // registers read (status flags included)
  std::uint32_t kills = 0;  // registers wholly written
  // Registers whose values (not addresses) it reads, and writes in part
  // or whole: an address derived from rsp flows from the one to the other.
  std::uint32_t value_reads = 0;
  std::uint32_t writes = 0;
  std::vector<Access> loads;  // memory it reads (read-modify-write too)
  std::vector<Access> stores; // memory it writes
  std::optional<Access> lea;  // the address an lea computes
  Stack stack = Stack::kKeep;
  std::int64_t stack_delta = 0;
  bool reads_top = false; // pop, ret: reads 8 bytes at rsp first
};

// Pages of code read through a MemoryReader, each once.
class Code {
public:
  Code(const MemoryReader &read, std::uint64_t origin)
      : read_(read), origin_(origin & ~(kPage - 1)) {}

  // Up to 15 bytes (the longest instruction) at address; fewer where the
  // memory ends.
  std::string at(std::uint64_t address);
  // The pages read (their address less origin's page) and their bytes.
  std::vector<std::pair<std::int64_t, std::string>> take();

private:
  const std::string &page_at(std::uint64_t page);

  const MemoryReader &read_;
  std::uint64_t origin_;
  std::map<std::uint64_t, std::string> pages_;
};

[[nodiscard]] std::vector<std::uint64_t> successors(const Step &step);

using Graph = std::map<std::uint64_t, Step>;

// The instructions reachable from start without passing a return; empty
// when the analysis must give up (an indirect jump, code it cannot read
// or decode, more than kMaxInstructions).
[[nodiscard]] Graph build_graph(Code &code, std::uint64_t start);

} // namespace cmc::decoder::code
