#include "decoder/capstone.h"

#include <array>
#include <utility>

namespace cmc::decoder {
namespace {

// The general-purpose registers: 64-, 32-, 16- and 8-bit names of each.
constexpr std::array<std::array<x86_reg, 4>, 16> kRegisters{{
    {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL},
    {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL},
    {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL},
    {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL},
    {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL},
    {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL},
    {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL},
    {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL},
    {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B},
    {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B},
    {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B},
    {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B},
    {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B},
    {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B},
    {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B},
    {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B},
}};

// Bits 8-15 of rax, rbx, rcx and rdx.
constexpr std::array<x86_reg, 4> kHighBytes{X86_REG_AH, X86_REG_BH, X86_REG_CH,
                                            X86_REG_DH};

} // namespace

X86Register x86_register(unsigned reg) {
  for (std::size_t i = 0; i < kRegisters.size(); ++i)
    for (std::size_t width = 0; width < 4; ++width)
      if (kRegisters[i][width] == reg)
        return {static_cast<int>(i), width < 2};
  for (std::size_t i = 0; i < kHighBytes.size(); ++i)
    if (kHighBytes[i] == reg)
      return {static_cast<int>(i), false};
  return {};
}

Result<Capstone> Capstone::open(bool detail) {
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK)
    return Error{"Capstone cannot open an x86-64 disassembler"};
  Capstone capstone(handle);
  if (detail && cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
    return Error{"Capstone cannot give instruction details"};
  return capstone;
}

Capstone::Capstone(Capstone &&other) noexcept
    : handle_(std::exchange(other.handle_, 0)) {}

Capstone &Capstone::operator=(Capstone &&other) noexcept {
  if (this != &other) {
    if (handle_ != 0)
      cs_close(&handle_);
    handle_ = std::exchange(other.handle_, 0);
  }
  return *this;
}

Capstone::~Capstone() {
  if (handle_ != 0)
    cs_close(&handle_);
}

Result<Instructions> Instructions::buffer(const Capstone &capstone) {
  cs_insn *insn = cs_malloc(capstone.get());
  if (insn == nullptr)
    return Error{"Capstone cannot allocate an instruction"};
  return Instructions(insn, 1);
}

Instructions Instructions::disassemble(const Capstone &capstone,
                                       std::span<const std::byte> code,
                                       std::uint64_t address) {
  cs_insn *insn = nullptr;
  const std::size_t count = cs_disasm(
      capstone.get(), reinterpret_cast<const std::uint8_t *>(code.data()),
      code.size(), address, 0, &insn);
  return {count == 0 ? nullptr : insn, count};
}

Instructions::Instructions(Instructions &&other) noexcept
    : insn_(std::exchange(other.insn_, nullptr)),
      count_(std::exchange(other.count_, 0)) {}

Instructions &Instructions::operator=(Instructions &&other) noexcept {
  if (this != &other) {
    if (insn_ != nullptr)
      cs_free(insn_, count_);
    insn_ = std::exchange(other.insn_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

Instructions::~Instructions() {
  if (insn_ != nullptr)
    cs_free(insn_, count_);
}

} // namespace cmc::decoder
