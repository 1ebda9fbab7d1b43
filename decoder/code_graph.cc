#include "decoder/code_graph.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <optional>

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

} // namespace

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

Graph build_graph(Code &code, std::uint64_t start) {
  auto capstone = Capstone::open(true);
  if (!capstone)
    return {};
  auto buffer = Instructions::buffer(*capstone);
  if (!buffer)
    return {};
  Graph graph;
  std::vector<std::uint64_t> work{start};
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

} // namespace cmc::decoder::code
