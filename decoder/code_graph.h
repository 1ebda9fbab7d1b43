#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
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

// kSwitch: an indirect jump through a table of the code's (a switch),
// its targets found from the code before it (jump_tables.h).
enum class Flow { kNext, kJump, kBranch, kCall, kReturn, kSyscall, kSwitch };
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

// An explicit operand, as the analyses read the code before a switch.
struct Operand {
  enum class Kind : std::uint8_t { kNone, kRegister, kImmediate, kMemory };
  Kind kind = Kind::kNone;
  int reg = -1;           // kRegister: a general register's number
  std::uint8_t size = 0;  // bytes
  std::int64_t value = 0; // kImmediate
  Access memory{};        // kMemory
  int scale = 1;
  // kMemory relative to rip: memory.displacement is the absolute address.
  bool rip = false;
};

// What the analyses need of one instruction.
struct Step {
  std::uint64_t next = 0; // the address after it
  Flow flow = Flow::kNext;
  std::uint64_t target = 0; // of a direct jump, branch or call
  bool returns = true;      // a call: false when its callee never returns
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
  unsigned id = 0;        // Capstone's instruction id
  std::array<Operand, 2> operands{};
  std::vector<std::uint64_t> targets; // of a kSwitch, once found
};

// Pages of code read through a MemoryReader, each once.
class Code {
public:
  Code(const MemoryReader &read, std::uint64_t origin)
      : read_(read), origin_(origin & ~(kPage - 1)) {}

  // Up to 15 bytes (the longest instruction) at address; fewer where the
  // memory ends.
  std::string at(std::uint64_t address);
  // length bytes at address (fewer where the memory ends), through the
  // same pages.
  std::string bytes(std::uint64_t address, std::size_t length);
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

// Whether a function, called at its address, never returns (exit,
// abort, __stack_chk_fail, ...): what follows its call is not followed.
using NoReturn = std::function<bool(std::uint64_t)>;

// The instructions reachable from start without passing a return; empty
// when the analysis must give up (an indirect jump, code it cannot read
// or decode, more than kMaxInstructions).
[[nodiscard]] Graph build_graph(Code &code, std::uint64_t start,
                                const NoReturn &no_return);

} // namespace cmc::decoder::code
