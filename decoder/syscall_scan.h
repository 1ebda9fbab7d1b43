#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoder/elf_file.h"
#include "util/result.h"

namespace cmc::decoder {

// One system call instruction found in an executable's code.
struct SyscallSite {
  std::uint64_t address = 0;  // link-time address
  std::string instruction;    // "syscall", "sysenter" or "int 0x80"
  std::string function;       // enclosing function symbol, "" if none
  std::optional<long> number; // set by a preceding mov eax, imm (or copy)
};

// Disassembles every executable section (or, without section headers,
// every executable PT_LOAD segment) with Capstone, restarting at each
// function symbol and resynchronising one byte on after bytes Capstone
// cannot decode, and lists the system call instructions in address order.
[[nodiscard]] Result<std::vector<SyscallSite>>
scan_syscall_sites(const ElfFile &elf);

// The x86-64 name of a system call number ("read"), or "".
[[nodiscard]] std::string syscall_name(long number);

} // namespace cmc::decoder
