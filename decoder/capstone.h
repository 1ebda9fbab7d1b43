#pragma once

#include <capstone/capstone.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "util/result.h"

namespace cmc::decoder {

// An x86-64 Capstone disassembler (csh), closed when it goes.
class Capstone {
public:
  // detail: with operand details (CS_OPT_DETAIL), which cost time.
  [[nodiscard]] static Result<Capstone> open(bool detail);
  Capstone(Capstone &&other) noexcept;
  Capstone &operator=(Capstone &&other) noexcept;
  Capstone(const Capstone &) = delete;
  Capstone &operator=(const Capstone &) = delete;
  ~Capstone();

  [[nodiscard]] csh get() const { return handle_; }

private:
  explicit Capstone(csh handle) : handle_(handle) {}
  csh handle_ = 0;
};

// Instructions Capstone allocated (cs_insn), freed when they go: the
// one-instruction buffer of cs_disasm_iter (cs_malloc), or every
// instruction cs_disasm decoded. Outlives no Capstone it came from.
class Instructions {
public:
  // A buffer for cs_disasm_iter; an error if Capstone has no memory.
  [[nodiscard]] static Result<Instructions> buffer(const Capstone &capstone);
  // The instructions at the start of code (at address) that decode, up to
  // the first that does not.
  [[nodiscard]] static Instructions disassemble(const Capstone &capstone,
                                                std::span<const std::byte> code,
                                                std::uint64_t address);
  Instructions(Instructions &&other) noexcept;
  Instructions &operator=(Instructions &&other) noexcept;
  Instructions(const Instructions &) = delete;
  Instructions &operator=(const Instructions &) = delete;
  ~Instructions();

  [[nodiscard]] std::span<cs_insn> get() const { return {insn_, count_}; }

private:
  Instructions(cs_insn *insn, std::size_t count) : insn_(insn), count_(count) {}
  cs_insn *insn_ = nullptr;
  std::size_t count_ = 0;
};

// A general-purpose register as Capstone names any part of it: its
// number in the order rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8 ... r15
// (-1 for any other register), and whether a write of that part defines
// the whole register (64 bits, or 32 that the CPU zero-extends).
struct X86Register {
  int index = -1;
  bool whole = false;
};
[[nodiscard]] X86Register x86_register(unsigned reg);

} // namespace cmc::decoder
