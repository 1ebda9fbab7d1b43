#include "decoder/code_graph.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "decoder/capstone.h"

namespace cmc::decoder::code {

std::uint32_t argument_bits(int count) {
  std::uint32_t bits = 0;
  for (int i = 0; i < std::min(count, 6); ++i)
    bits |= bit(kArguments[static_cast<std::size_t>(i)]);
  return bits;
}

// The longest x86 instruction.
constexpr std::size_t kMaxLength = 15;

std::string Code::at(std::uint64_t address) {
  return bytes(address, kMaxLength);
}

std::string Code::bytes(std::uint64_t address, std::size_t length) {
  std::string bytes;
  for (std::uint64_t page = address & ~(kPage - 1); bytes.size() < length;
       page += kPage) {
    const std::string &text = page_at(page);
    const std::uint64_t from = std::max(address, page) - page;
    if (from >= text.size())
      break;
    bytes += text.substr(from, length - bytes.size());
    if (text.size() < kPage)
      break;
  }
  return bytes;
}

std::vector<std::pair<std::int64_t, std::string>> Code::take() {
  std::vector<std::pair<std::int64_t, std::string>> pages;
  for (auto &[page, text] : pages_)
    pages.emplace_back(static_cast<std::int64_t>(page - origin_),
                       std::move(text));
  return pages;
}

const std::string &Code::page_at(std::uint64_t page) {
  auto found = pages_.find(page);
  if (found == pages_.end())
    found = pages_.emplace(page, read_(page, kPage)).first;
  return found->second;
}

namespace {

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
    return bit(kFlags);
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
    return bit(kRax) | bit(kRcx) | bit(kRsi) | bit(kRdi) | bit(kFlags);
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
      step.reads |= bit(kFlags);
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
    const Access access{base, index, op.mem.disp,
                        op.mem.segment != X86_REG_INVALID, op.size};
    if (insn.id == X86_INS_LEA) {
      step.value_reads |=
          (base < 0 ? 0 : bit(base)) | (index < 0 ? 0 : bit(index));
      step.lea = access;
      continue;
    }
    if (is_nop(insn.id))
      continue;
    if ((op.access & CS_AC_WRITE) != 0)
      step.stores.push_back(access);
    if ((op.access & CS_AC_READ) != 0 || op.access == 0)
      step.loads.push_back(access);
  }
  step.value_reads |= implicit_reads(insn.id) & ~bit(kFlags);
  if ((x86.eflags & kFlagTests) != 0)
    step.reads |= bit(kFlags);
  if (defines_status_flags(x86.eflags))
    step.kills |= bit(kFlags);
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
    step.target = direct_target(insn).value_or(0);
  } else if (insn.id == X86_INS_RET) {
    step.flow = Flow::kReturn;
    step.reads_top = true;
  } else if (insn.id == X86_INS_JMP && !direct_target(insn)) {
    step.flow = Flow::kSwitch;
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

// next: the address after the instruction, which rip-relative operands
// count from.
Operand operand_of(const cs_x86_op &op, std::uint64_t next) {
  Operand operand;
  operand.size = op.size;
  switch (op.type) {
  case X86_OP_REG:
    operand.kind = Operand::Kind::kRegister;
    operand.reg = register_index(op.reg);
    break;
  case X86_OP_IMM:
    operand.kind = Operand::Kind::kImmediate;
    operand.value = op.imm;
    break;
  case X86_OP_MEM:
    operand.kind = Operand::Kind::kMemory;
    operand.rip = op.mem.base == X86_REG_RIP;
    operand.memory = {register_index(op.mem.base), register_index(op.mem.index),
                      operand.rip
                          ? static_cast<std::int64_t>(next) + op.mem.disp
                          : op.mem.disp,
                      op.mem.segment != X86_REG_INVALID, op.size};
    operand.scale = op.mem.scale;
    break;
  default:
    break;
  }
  return operand;
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
  step.id = insn.id;
  const cs_x86 &x86 = insn.detail->x86;
  for (std::uint8_t i = 0; i < std::min<std::uint8_t>(x86.op_count, 2); ++i)
    step.operands[i] = operand_of(x86.operands[i], at);
  return step;
}

} // namespace

std::vector<std::uint64_t> successors(const Step &step) {
  switch (step.flow) {
  case Flow::kReturn:
    return {};
  case Flow::kJump:
    return {step.target};
  case Flow::kBranch:
    return {step.target, step.next};
  case Flow::kSwitch:
    return step.targets;
  case Flow::kCall:
    if (!step.returns)
      return {};
    return {step.next};
  default:
    return {step.next};
  }
}

namespace {

using Kind = Operand::Kind;
// The instructions followed back from a switch's jump.
constexpr std::size_t kChain = 12;
// The largest table followed.
constexpr std::int64_t kMaxCases = 4096;
constexpr std::uint32_t kCallerSaved = bit(kRax) | bit(kRcx) | bit(kRdx) |
                                       bit(kRsi) | bit(kRdi) | bit(kR8) |
                                       bit(kR9) | bit(kR10) | bit(kR11);

using Constants = std::array<std::optional<std::uint64_t>, kRegisters>;

bool is_register(const Operand &operand, std::uint8_t size) {
  return operand.kind == Kind::kRegister && operand.reg >= 0 &&
         operand.size == size;
}

Constants after(const Step &step, Constants values) {
  const Operand &to = step.operands[0];
  const Operand &from = step.operands[1];
  if (step.id == X86_INS_LEA && from.rip && is_register(to, 8)) {
    values[static_cast<std::size_t>(to.reg)] =
        static_cast<std::uint64_t>(from.memory.displacement);
    return values;
  }
  std::optional<std::uint64_t> copied;
  const bool copy =
      step.id == X86_INS_MOV && is_register(to, 8) && is_register(from, 8);
  if (copy)
    copied = values[static_cast<std::size_t>(from.reg)];
  std::uint32_t lost = step.writes;
  if (step.flow == Flow::kCall)
    lost |= kCallerSaved;
  if (step.flow == Flow::kSyscall)
    lost |= kSyscallWrites;
  for (int r = 0; r < kRegisters; ++r)
    if ((lost & bit(r)) != 0)
      values[static_cast<std::size_t>(r)].reset();
  if (copy)
    values[static_cast<std::size_t>(to.reg)] = copied;
  return values;
}

// The addresses `lea x(%rip)` put in each register, where every path
// agrees, before each instruction reachable from start.
std::map<std::uint64_t, Constants> rip_constants(const Graph &graph,
                                                 std::uint64_t start) {
  std::map<std::uint64_t, Constants> before{{start, Constants{}}};
  std::vector<std::uint64_t> work{start};
  while (!work.empty()) {
    const std::uint64_t address = work.back();
    work.pop_back();
    const auto found = graph.find(address);
    if (found == graph.end())
      continue;
    const Constants out = after(found->second, before.at(address));
    for (const std::uint64_t next : successors(found->second)) {
      const auto [at, added] = before.emplace(next, out);
      if (added) {
        work.push_back(next);
        continue;
      }
      bool changed = false;
      for (std::size_t r = 0; r < out.size(); ++r)
        if (at->second[r] && at->second[r] != out[r]) {
          at->second[r].reset();
          changed = true;
        }
      if (changed)
        work.push_back(next);
    }
  }
  return before;
}

// The instructions that lead to jump without a jump of their own: jump,
// the one before it (that falls through to it), ... up to kChain.
std::vector<std::uint64_t> chain_to(const Graph &graph, std::uint64_t jump) {
  std::map<std::uint64_t, std::uint64_t> falls_from;
  for (const auto &[address, step] : graph)
    if (step.flow == Flow::kNext || step.flow == Flow::kBranch)
      falls_from[step.next] = address;
  std::vector<std::uint64_t> chain{jump};
  while (chain.size() < kChain) {
    const auto found = falls_from.find(chain.back());
    if (found == falls_from.end())
      break;
    chain.push_back(found->second);
  }
  return chain;
}

// Whether the instructions from chain[from] to chain[to] (back to front,
// as they run) leave the value cmp bounded in register index: moved by a
// zero-extending mov of the compared register, or the compared register
// itself when the cmp was of all of it.
bool bounded_index(const Graph &graph, const std::vector<std::uint64_t> &chain,
                   std::size_t from, std::size_t to, const Operand &compared,
                   int index) {
  std::set<int> bounded;
  if (compared.size == 8)
    bounded.insert(compared.reg);
  bool source = true; // the compared register still holds the value
  for (std::size_t i = from + 1; i-- > to;) {
    const Step &step = graph.at(chain[i]);
    const Operand &to_reg = step.operands[0];
    const Operand &from_reg = step.operands[1];
    const bool extends =
        source && from_reg.kind == Kind::kRegister &&
        from_reg.reg == compared.reg && from_reg.size == compared.size &&
        to_reg.kind == Kind::kRegister &&
        (step.id == X86_INS_MOVZX ||
         (step.id == X86_INS_MOV && to_reg.size == 4 && compared.size == 4));
    for (int r = 0; r < kRegisters; ++r)
      if ((step.writes & bit(r)) != 0) {
        bounded.erase(r);
        if (r == compared.reg)
          source = false;
      }
    if (extends)
      bounded.insert(to_reg.reg);
  }
  return bounded.contains(index);
}

// Whether some instruction of the graph jumps to one of addresses.
bool jumped_into(const Graph &graph, const std::set<std::uint64_t> &addresses) {
  return std::any_of(graph.begin(), graph.end(), [&](const auto &at) {
    const Step &step = at.second;
    if (step.flow == Flow::kJump || step.flow == Flow::kBranch)
      return addresses.contains(step.target);
    return std::any_of(
        step.targets.begin(), step.targets.end(),
        [&](std::uint64_t target) { return addresses.contains(target); });
  });
}

// The table's entries: offsets from its start.
std::optional<std::vector<std::uint64_t>>
read_table(Code &code, std::uint64_t table, std::int64_t cases) {
  const std::string bytes =
      code.bytes(table, static_cast<std::size_t>(cases) * 4);
  if (bytes.size() != static_cast<std::size_t>(cases) * 4)
    return std::nullopt;
  std::set<std::uint64_t> targets;
  for (std::int64_t i = 0; i < cases; ++i) {
    std::int32_t offset = 0;
    std::memcpy(&offset, bytes.data() + i * 4, 4);
    targets.insert(table + static_cast<std::uint64_t>(std::int64_t{offset}));
  }
  return std::vector<std::uint64_t>(targets.begin(), targets.end());
}

// The targets of the switch jump (a kSwitch step of graph, whose code runs
// from start): GCC's position-independent jump table, the code just
// before the jump being
//
//   cmp $N, C ; ja default ; ... I = C zero-extended ... ;
//   movslq (B, I, 4), T ; add B, T ; jmp *T
//
// with B an address the code took with `lea table(%rip)`: the N + 1
// 4-byte offsets from the table's start there. None when the code is not
// that, or when other code of the graph jumps between the bound check and
// the jump (its index would not be bounded).
std::optional<std::vector<std::uint64_t>> switch_targets(const Graph &graph,
                                                         std::uint64_t start,
                                                         std::uint64_t jump,
                                                         Code &code) {
  const auto chain = chain_to(graph, jump);
  if (chain.size() < 5 || !is_register(graph.at(jump).operands[0], 8))
    return std::nullopt;
  const int target = graph.at(jump).operands[0].reg;
  const Step &add = graph.at(chain[1]);
  const Step &load = graph.at(chain[2]);
  const Operand &entry = load.operands[1];
  if (add.id != X86_INS_ADD || !is_register(add.operands[0], 8) ||
      add.operands[0].reg != target || !is_register(add.operands[1], 8) ||
      load.id != X86_INS_MOVSXD || !is_register(load.operands[0], 8) ||
      load.operands[0].reg != target || entry.kind != Kind::kMemory ||
      entry.rip || entry.memory.segment || entry.scale != 4 ||
      entry.memory.displacement != 0 ||
      entry.memory.base != add.operands[1].reg || entry.memory.index < 0)
    return std::nullopt;
  for (std::size_t k = 3; k + 1 < chain.size(); ++k) {
    const Step &branch = graph.at(chain[k]);
    const Step &compare = graph.at(chain[k + 1]);
    if (branch.flow != Flow::kBranch ||
        (branch.id != X86_INS_JA && branch.id != X86_INS_JAE))
      continue;
    const Operand &bound = compare.operands[1];
    if (compare.id != X86_INS_CMP ||
        compare.operands[0].kind != Kind::kRegister ||
        compare.operands[0].reg < 0 || bound.kind != Kind::kImmediate ||
        bound.value < 0 || bound.value >= kMaxCases ||
        !bounded_index(graph, chain, k - 1, 3, compare.operands[0],
                       entry.memory.index))
      return std::nullopt;
    const std::set<std::uint64_t> inside(
        chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(k));
    const auto constants = rip_constants(graph, start);
    const auto at_load = constants.find(chain[2]);
    if (jumped_into(graph, inside) || at_load == constants.end())
      return std::nullopt;
    const auto table =
        at_load->second[static_cast<std::size_t>(entry.memory.base)];
    if (!table)
      return std::nullopt;
    return read_table(code, *table, bound.value + 1);
  }
  return std::nullopt;
}

// Decodes what is reachable from work into graph; false where it must
// give up.
bool follow(Code &code, Graph &graph, std::vector<std::uint64_t> work,
            const NoReturn &no_return) {
  auto capstone = Capstone::open(true);
  if (!capstone)
    return false;
  auto buffer = Instructions::buffer(*capstone);
  if (!buffer)
    return false;
  while (!work.empty()) {
    const std::uint64_t address = work.back();
    work.pop_back();
    if (graph.contains(address))
      continue;
    if (graph.size() >= kMaxInstructions)
      return false;
    auto step = decode(capstone->get(), buffer->get()[0], code, address);
    if (!step)
      return false;
    if (step->flow == Flow::kCall && step->target != 0 && no_return &&
        no_return(step->target))
      step->returns = false;
    for (const std::uint64_t next : successors(*step))
      work.push_back(next);
    graph.emplace(address, std::move(*step));
  }
  return true;
}

} // namespace

Graph build_graph(Code &code, std::uint64_t start, const NoReturn &no_return) {
  Graph graph;
  std::vector<std::uint64_t> work{start};
  // Each switch's targets are found once the code before it is known;
  // their code may hold more switches.
  for (bool found = true; found;) {
    if (!follow(code, graph, std::move(work), no_return))
      return {};
    work.clear();
    found = false;
    for (auto &[address, step] : graph) {
      if (step.flow != Flow::kSwitch || !step.targets.empty())
        continue;
      auto targets = switch_targets(graph, start, address, code);
      if (!targets)
        return {};
      step.targets = std::move(*targets);
      work.insert(work.end(), step.targets.begin(), step.targets.end());
      found = true;
    }
  }
  // Code found later may jump into what bounded a switch's index, or
  // change the table's address: each must still hold.
  for (const auto &[address, step] : graph)
    if (step.flow == Flow::kSwitch &&
        switch_targets(graph, start, address, code) != step.targets)
      return {};
  return graph;
}

} // namespace cmc::decoder::code
