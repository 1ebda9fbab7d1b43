#include "decoder/liveness.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "decoder/capstone.h"

namespace cmc::decoder {
namespace {

constexpr std::size_t kMaxInstructions = 4096;
constexpr std::uint64_t kPage = 4096;
// The longest x86 instruction.
constexpr std::size_t kMaxLength = 15;

constexpr std::uint32_t bit(int index) { return std::uint32_t{1} << index; }
constexpr int kRax = 0;
constexpr int kRbx = 1;
constexpr int kRcx = 2;
constexpr int kRdx = 3;
constexpr int kRsi = 4;
constexpr int kRdi = 5;
constexpr int kRsp = 7;
constexpr int kR8 = 8;
constexpr int kR9 = 9;
constexpr int kR10 = 10;
constexpr int kR11 = 11;
// A call reads the argument registers, rax (the vector registers a
// variadic callee takes) and rsp. It is not taken to write the
// caller-saved ones: a compiler that sees the callee's body (GCC's
// -fipa-ra) keeps values in those the callee leaves alone.
constexpr std::uint32_t kCallReads = bit(kRdi) | bit(kRsi) | bit(kRdx) |
                                     bit(kRcx) | bit(kR8) | bit(kR9) |
                                     bit(kRax) | bit(kRsp);
// The kernel's system call arguments, in order.
constexpr std::array<int, 6> kArguments{kRdi, kRsi, kRdx, kR10, kR8, kR9};
// What the kernel writes at a system call's return: the result, and the
// return address and flags the `syscall` instruction saved.
constexpr std::uint32_t kSyscallWrites = bit(kRax) | bit(kRcx) | bit(kR11);

std::uint32_t argument_bits(int count) {
  std::uint32_t bits = 0;
  for (int i = 0; i < std::min(count, 6); ++i)
    bits |= bit(kArguments[static_cast<std::size_t>(i)]);
  return bits;
}

enum class Flow { kNext, kJump, kBranch, kCall, kReturn, kSyscall };
enum class Stack { kKeep, kMove, kUnknown };

// A memory read through base + index + disp (base or index -1 when it is
// not a general register: rip, an absolute address, a segment base).
struct Load {
  int base = -1;
  int index = -1;
  std::int64_t displacement = 0;
  bool segment = false; // fs: or gs:, whose bases are registers
};

// What the analysis needs of one instruction.
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
  bool stores = false;
  std::vector<Load> loads;
  Stack stack = Stack::kKeep;
  std::int64_t stack_delta = 0;
  bool reads_top = false; // pop, ret: reads 8 bytes at rsp first
};

// Pages of code read through a MemoryReader, each once.
class Code {
public:
  Code(const MemoryReader &read, std::uint64_t origin)
      : read_(read), origin_(origin & ~(kPage - 1)) {}

  // Up to kMaxLength bytes at address; fewer where the memory ends.
  std::string at(std::uint64_t address) {
    std::string bytes;
    for (std::uint64_t page = address & ~(kPage - 1); bytes.size() < kMaxLength;
         page += kPage) {
      const std::string &text = page_at(page);
      const std::uint64_t from = std::max(address, page) - page;
      if (from >= text.size())
        break;
      bytes += text.substr(from, kMaxLength - bytes.size());
      if (text.size() < kPage)
        break;
    }
    return bytes;
  }

  std::vector<std::pair<std::int64_t, std::string>> take() {
    std::vector<std::pair<std::int64_t, std::string>> pages;
    for (auto &[page, text] : pages_)
      pages.emplace_back(static_cast<std::int64_t>(page - origin_),
                         std::move(text));
    return pages;
  }

private:
  const std::string &page_at(std::uint64_t page) {
    auto found = pages_.find(page);
    if (found == pages_.end())
      found = pages_.emplace(page, read_(page, kPage)).first;
    return found->second;
  }

  const MemoryReader &read_;
  std::uint64_t origin_;
  std::map<std::uint64_t, std::string> pages_;
};

int register_index(unsigned reg) { return x86_register(reg).index; }

std::uint32_t register_bit(unsigned reg) {
  const int index = register_index(reg);
  return index < 0 ? 0 : bit(index);
}

constexpr std::uint64_t kFlagTests = X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF |
                                     X86_EFLAGS_TEST_ZF | X86_EFLAGS_TEST_PF |
                                     X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_AF;
// Each status flag, as the bits that say an instruction gives it a value
// (an "undefined" flag may keep its old one on some CPUs).
constexpr std::array<std::uint64_t, 6> kFlagDefines{
    X86_EFLAGS_MODIFY_CF | X86_EFLAGS_RESET_CF | X86_EFLAGS_SET_CF,
    X86_EFLAGS_MODIFY_PF | X86_EFLAGS_RESET_PF | X86_EFLAGS_SET_PF,
    X86_EFLAGS_MODIFY_AF | X86_EFLAGS_RESET_AF | X86_EFLAGS_SET_AF,
    X86_EFLAGS_MODIFY_ZF | X86_EFLAGS_RESET_ZF | X86_EFLAGS_SET_ZF,
    X86_EFLAGS_MODIFY_SF | X86_EFLAGS_RESET_SF | X86_EFLAGS_SET_SF,
    X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_OF | X86_EFLAGS_SET_OF,
};

bool defines_status_flags(std::uint64_t eflags) {
  return std::all_of(kFlagDefines.begin(), kFlagDefines.end(),
                     [&](std::uint64_t flag) { return (eflags & flag) != 0; });
}

// Registers some instructions read without Capstone 4 always saying so.
std::uint32_t implicit_reads(unsigned id) {
  switch (id) {
  case X86_INS_PUSHF:
  case X86_INS_PUSHFQ:
  case X86_INS_LAHF:
    return bit(kStatusFlags);
  case X86_INS_MOVSB:
  case X86_INS_MOVSW:
  case X86_INS_MOVSD:
  case X86_INS_MOVSQ:
  case X86_INS_STOSB:
  case X86_INS_STOSW:
  case X86_INS_STOSD:
  case X86_INS_STOSQ:
  case X86_INS_LODSB:
  case X86_INS_LODSW:
  case X86_INS_LODSD:
  case X86_INS_LODSQ:
  case X86_INS_CMPSB:
  case X86_INS_CMPSW:
  case X86_INS_CMPSD:
  case X86_INS_CMPSQ:
  case X86_INS_SCASB:
  case X86_INS_SCASW:
  case X86_INS_SCASD:
  case X86_INS_SCASQ:
    return bit(kRax) | bit(kRcx) | bit(kRsi) | bit(kRdi) | bit(kStatusFlags);
  case X86_INS_CMPXCHG:
  case X86_INS_CMPXCHG8B:
  case X86_INS_CMPXCHG16B:
    return bit(kRax) | bit(kRdx) | bit(kRbx) | bit(kRcx);
  case X86_INS_MUL:
  case X86_INS_IMUL:
  case X86_INS_DIV:
  case X86_INS_IDIV:
  case X86_INS_CQO:
  case X86_INS_CDQ:
  case X86_INS_CWD:
  case X86_INS_CDQE:
    return bit(kRax) | bit(kRdx);
  case X86_INS_CPUID:
    return bit(kRax) | bit(kRcx);
  case X86_INS_XLATB:
    return bit(kRax) | bit(kRbx);
  default:
    return 0;
  }
}

// The registers cs_regs_access names.
bool add_register_access(csh handle, const cs_insn &insn, Step &step) {
  cs_regs read{};
  cs_regs written{};
  std::uint8_t read_count = 0;
  std::uint8_t written_count = 0;
  if (cs_regs_access(handle, &insn, read, &read_count, written,
                     &written_count) != CS_ERR_OK)
    return false;
  for (std::uint8_t i = 0; i < read_count; ++i) {
    if (read[i] == X86_REG_EFLAGS)
      step.reads |= bit(kStatusFlags);
    step.reads |= register_bit(read[i]);
  }
  for (std::uint8_t i = 0; i < written_count; ++i) {
    const X86Register name = x86_register(written[i]);
    if (name.index < 0)
      continue;
    step.writes |= bit(name.index);
    if (name.whole)
      step.kills |= bit(name.index);
  }
  return true;
}

bool is_nop(unsigned id) { return id == X86_INS_NOP || id == X86_INS_LEA; }

void add_operands(const cs_insn &insn, Step &step) {
  const cs_x86 &x86 = insn.detail->x86;
  for (std::uint8_t i = 0; i < x86.op_count; ++i) {
    const cs_x86_op &op = x86.operands[i];
    if (op.type == X86_OP_REG && (op.access & CS_AC_READ) != 0)
      step.value_reads |= register_bit(op.reg);
    if (op.type != X86_OP_MEM)
      continue;
    // rip-relative: code or data of a file, never a stack.
    if (op.mem.base == X86_REG_RIP)
      continue;
    const int base = register_index(op.mem.base);
    const int index = register_index(op.mem.index);
    step.reads |= (base < 0 ? 0 : bit(base)) | (index < 0 ? 0 : bit(index));
    if (insn.id == X86_INS_LEA) {
      step.value_reads |=
          (base < 0 ? 0 : bit(base)) | (index < 0 ? 0 : bit(index));
      continue;
    }
    if (is_nop(insn.id))
      continue;
    if ((op.access & CS_AC_WRITE) != 0)
      step.stores = true;
    if ((op.access & CS_AC_READ) != 0 || op.access == 0)
      step.loads.push_back(
          {base, index, op.mem.disp, op.mem.segment != X86_REG_INVALID});
  }
  step.value_reads |= implicit_reads(insn.id) & ~bit(kStatusFlags);
  if ((x86.eflags & kFlagTests) != 0)
    step.reads |= bit(kStatusFlags);
  if (defines_status_flags(x86.eflags))
    step.kills |= bit(kStatusFlags);
}

bool has_group(const cs_insn &insn, std::uint8_t group) {
  const cs_detail &detail = *insn.detail;
  return std::find(detail.groups, detail.groups + detail.groups_count, group) !=
         detail.groups + detail.groups_count;
}

// The immediate target of a jump, if it has one.
std::optional<std::uint64_t> direct_target(const cs_insn &insn) {
  const cs_x86 &x86 = insn.detail->x86;
  if (x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM)
    return static_cast<std::uint64_t>(x86.operands[0].imm);
  return std::nullopt;
}

// How the instruction moves rsp, when it does in a way the analysis
// follows: push, pop, add/sub of an immediate, lea from rsp.
void add_stack_effect(const cs_insn &insn, Step &step) {
  const cs_x86 &x86 = insn.detail->x86;
  const bool rsp_first = x86.op_count >= 1 &&
                         x86.operands[0].type == X86_OP_REG &&
                         x86.operands[0].reg == X86_REG_RSP;
  const bool immediate =
      x86.op_count == 2 && x86.operands[1].type == X86_OP_IMM;
  step.stack = Stack::kMove;
  switch (insn.id) {
  case X86_INS_PUSH:
  case X86_INS_PUSHFQ:
    step.stack_delta = -8;
    break;
  case X86_INS_POP:
  case X86_INS_POPFQ:
    step.reads_top = true;
    step.stack_delta = 8;
    break;
  case X86_INS_ADD:
  case X86_INS_SUB:
    if (rsp_first && immediate)
      step.stack_delta =
          insn.id == X86_INS_ADD ? x86.operands[1].imm : -x86.operands[1].imm;
    break;
  case X86_INS_LEA:
    if (rsp_first && x86.operands[1].mem.base == X86_REG_RSP &&
        x86.operands[1].mem.index == X86_REG_INVALID)
      step.stack_delta = x86.operands[1].mem.disp;
    break;
  default:
    break;
  }
  if (step.stack_delta == 0 && (step.writes & bit(kRsp)) != 0)
    step.stack = Stack::kUnknown;
  if (x86.prefix[2] == 0x66 || (rsp_first && insn.id == X86_INS_POP))
    step.stack = Stack::kUnknown;
}

// The control flow of the instruction; false where the analysis stops
// knowing where the code goes.
bool add_flow(const cs_insn &insn, Step &step) {
  if (insn.id == X86_INS_SYSCALL) {
    step.flow = Flow::kSyscall;
  } else if (insn.id == X86_INS_CALL) {
    step.flow = Flow::kCall;
  } else if (insn.id == X86_INS_RET) {
    step.flow = Flow::kReturn;
    step.reads_top = true;
  } else if (has_group(insn, CS_GRP_JUMP)) {
    const auto target = direct_target(insn);
    if (!target)
      return false;
    step.flow = insn.id == X86_INS_JMP ? Flow::kJump : Flow::kBranch;
    step.target = *target;
  } else if (has_group(insn, CS_GRP_INT) || has_group(insn, CS_GRP_IRET) ||
             has_group(insn, CS_GRP_PRIVILEGE) || has_group(insn, CS_GRP_RET) ||
             insn.id == X86_INS_UD2 || insn.id == X86_INS_HLT ||
             insn.id == X86_INS_SYSENTER || insn.id == X86_INS_ENTER) {
    return false;
  }
  return true;
}

std::optional<Step> decode(csh handle, cs_insn &insn, Code &code,
                           std::uint64_t address) {
  const std::string bytes = code.at(address);
  const auto *data = reinterpret_cast<const std::uint8_t *>(bytes.data());
  std::size_t size = bytes.size();
  std::uint64_t at = address;
  if (!cs_disasm_iter(handle, &data, &size, &at, &insn))
    return std::nullopt;
  Step step;
  step.next = at;
  if (!add_register_access(handle, insn, step) || !add_flow(insn, step))
    return std::nullopt;
  add_operands(insn, step);
  step.reads |= implicit_reads(insn.id);
  add_stack_effect(insn, step);
  return step;
}

std::vector<std::uint64_t> successors(const Step &step) {
  switch (step.flow) {
  case Flow::kReturn:
    return {};
  case Flow::kJump:
    return {step.target};
  case Flow::kBranch:
    return {step.target, step.next};
  default:
    return {step.next};
  }
}

using Graph = std::map<std::uint64_t, Step>;

// The instructions reachable from rip without passing a return; empty
// when the analysis must give up.
Graph build_graph(Code &code, std::uint64_t rip) {
  auto capstone = Capstone::open(true);
  if (!capstone)
    return {};
  auto buffer = Instructions::buffer(*capstone);
  if (!buffer)
    return {};
  Graph graph;
  std::vector<std::uint64_t> work{rip};
  while (!work.empty()) {
    const std::uint64_t address = work.back();
    work.pop_back();
    if (graph.contains(address))
      continue;
    if (graph.size() >= kMaxInstructions)
      return {};
    auto step = decode(capstone->get(), buffer->get()[0], code, address);
    if (!step)
      return {};
    for (const std::uint64_t next : successors(*step))
      work.push_back(next);
    graph.emplace(address, std::move(*step));
  }
  return graph;
}

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
      for (const std::uint64_t next : successors(step))
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

// One path's position: where, rsp's offset from its value at the wait
// (when known), and the registers that may hold an address derived from
// rsp.
struct Position {
  std::uint64_t address = 0;
  bool known = true;
  std::int64_t offset = 0;
  std::uint32_t derived = 0;
  bool operator<(const Position &other) const {
    return std::tie(address, known, offset, derived) <
           std::tie(other.address, other.known, other.offset, other.derived);
  }
};

// What the code may read of the red zone, followed forward on every
// path from the wait to a return or a call.
class RedZoneReads {
public:
  explicit RedZoneReads(const Graph &graph) : graph_(graph) {}

  void run(std::uint64_t rip, int arguments) {
    if (arguments > 0)
      reach(0);
    std::vector<Position> work{{rip, true, 0, 0}};
    std::set<Position> seen;
    while (!work.empty() && !all_) {
      const Position at = work.back();
      work.pop_back();
      if (!seen.insert(at).second)
        continue;
      if (seen.size() > kMaxInstructions)
        all_ = true;
      step(at, work);
    }
  }

  [[nodiscard]] bool all() const { return all_; }
  [[nodiscard]] std::uint64_t below() const { return below_; }
  [[nodiscard]] std::optional<std::uint64_t> reach() const { return reach_; }

private:
  void reach(std::uint64_t distance) {
    reach_ = std::max(reach_.value_or(0), distance);
  }
  void read_at(const Position &at, std::int64_t displacement) {
    if (!at.known) {
      all_ = true;
      return;
    }
    const std::int64_t offset = at.offset + displacement;
    if (offset < 0)
      below_ = std::max(
          below_, std::min(kRedZone, static_cast<std::uint64_t>(-offset)));
  }
  void load(const Position &at, const Load &load) {
    if (load.base == kRsp && load.index < 0) {
      read_at(at, load.displacement);
      return;
    }
    const std::uint32_t derived = at.derived | bit(kRsp);
    const auto from = [&](int reg) {
      return reg >= 0 && (derived & bit(reg)) != 0;
    };
    if (from(load.base) || from(load.index))
      all_ = true;
    else if (load.base >= 0 || load.index >= 0 || load.segment)
      reach(static_cast<std::uint64_t>(std::abs(load.displacement)));
  }

  void step(Position at, std::vector<Position> &work);

  const Graph &graph_;
  bool all_ = false;
  std::uint64_t below_ = 0;
  std::optional<std::uint64_t> reach_;
};

void RedZoneReads::step(Position at, std::vector<Position> &work) {
  const Step &step = graph_.at(at.address);
  for (const Load &load : step.loads)
    this->load(at, load);
  if (step.reads_top)
    read_at(at, 0);
  if (step.flow == Flow::kReturn)
    return;
  if (step.flow == Flow::kCall) {
    // The callee may write anything below the stack pointer of the call:
    // the frame above it is the caller's, and what the callee reads
    // through the registers is bounded as any other read.
    if (!at.known || at.offset < 0)
      read_at(at, 0);
    if (at.derived != 0)
      all_ = true;
    reach(0);
    return;
  }
  if (step.flow == Flow::kSyscall) {
    if ((at.derived & argument_bits(6)) != 0)
      all_ = true;
    reach(0);
  }
  if ((step.value_reads & (at.derived | bit(kRsp))) != 0) {
    if (step.stores)
      all_ = true;
    at.derived |= step.writes & ~bit(kRsp);
  } else {
    at.derived &= ~step.kills;
  }
  if (step.stack == Stack::kUnknown)
    at.known = false;
  at.offset += step.stack_delta;
  for (const std::uint64_t next : successors(step)) {
    at.address = next;
    work.push_back(at);
  }
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
    if (seen.size() > kMaxInstructions)
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
    for (const std::uint64_t next : successors(step))
      work.emplace_back(next, next_offset);
  }
  return slot;
}

// The code's graph from start, its registers and return slot, or nothing
// when it cannot be followed.
std::optional<Graph> analyse_registers(Code &code, std::uint64_t start,
                                       Liveness &liveness) {
  Graph graph = build_graph(code, start);
  if (graph.empty())
    return std::nullopt;
  liveness.analysed = true;
  liveness.live = live_registers(graph, start, 0) | bit(kRsp);
  liveness.passed = live_registers(graph, start, kEveryRegister) | bit(kRsp);
  liveness.return_slot = return_slot(graph, start);
  return graph;
}

} // namespace

Liveness analyse_liveness(const MemoryReader &read, std::uint64_t rip,
                          int arguments) {
  Code code(read, rip);
  Liveness liveness;
  // int 0x80 and sysenter enter the kernel's 32-bit calls, which take
  // other registers and keep rcx and r11.
  const bool after_syscall = code.at(rip - 2).starts_with("\x0f\x05");
  const auto graph =
      after_syscall ? analyse_registers(code, rip, liveness) : std::nullopt;
  liveness.code = code.take();
  if (!graph)
    return liveness;
  // The kernel writes rax, rcx and r11 when the call returns, and reads
  // the call's arguments first.
  liveness.live = (liveness.live & ~kSyscallWrites) | argument_bits(arguments);
  liveness.passed &= ~kSyscallWrites;
  RedZoneReads red_zone(*graph);
  red_zone.run(rip, arguments);
  if (!red_zone.all()) {
    liveness.red_zone_read = red_zone.below();
    liveness.reach = red_zone.reach();
  }
  return liveness;
}

Liveness analyse_return(const MemoryReader &read, std::uint64_t address) {
  Code code(read, address);
  Liveness liveness;
  analyse_registers(code, address, liveness);
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

RedZoneWindow red_zone_window(const Liveness &liveness, std::uint64_t rsp) {
  const std::uint64_t reach = liveness.reach.value_or(0);
  return {rsp - kRedZone - reach, rsp + reach};
}

} // namespace cmc::decoder
