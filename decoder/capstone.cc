#include "decoder/capstone.h"

#include <utility>

namespace cmc::decoder {

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
