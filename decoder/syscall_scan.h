#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/elf_file.h"
#include "util/result.h"

namespace cmc::decoder {

// Whose code a system call instruction is.
enum class SiteOrigin {
  kInline,  // neither libc's nor ld.so's: the program's or another library's
  kLibc,    // libc.so's, or in a static executable a function of libc.a
  kLoader,  // ld.so's
  kUnknown, // in a static executable, outside every function symbol
};

// How the origins of one file's sites were told.
enum class Attribution {
  kFileName,     // libc.so.* is libc, ld-linux* is ld.so, any other inline
  kStaticLibc,   // a static executable, by the functions of libc.a
  kNoStaticLibc, // a static executable without a readable libc.a: all
                 // inline, libc's sites too (the file-name rule)
  kNoSymbols,    // a static executable without function symbols: unknown
};

// One system call instruction found in an executable's code.
struct SyscallSite {
  std::uint64_t address = 0;  // link-time address
  std::string instruction;    // "syscall", "sysenter" or "int 0x80"
  Symbol function;            // enclosing function symbol, name "" if none
  std::optional<long> number; // set by a preceding mov eax, imm (or copy)
  SiteOrigin origin = SiteOrigin::kInline;
};

// One rdtsc or rdtscp instruction found in an executable's code.
struct TscSite {
  std::uint64_t address = 0; // link-time address
  std::uint8_t length = 2;   // bytes: 2 for rdtsc (0f 31), 3 for rdtscp
  bool rdtscp = false;       // rdtscp also writes IA32_TSC_AUX to ecx
};

// An instruction that reads the CPU's identity or its random numbers,
// which only CPUID faulting hides (cpuid itself, rdrand, rdseed, rdpid).
enum class CpuInstruction : std::uint8_t { kCpuid, kRdrand, kRdseed, kRdpid };

// One of them found in an executable's code.
struct CpuSite {
  std::uint64_t address = 0; // link-time address
  CpuInstruction instruction = CpuInstruction::kCpuid;
};

// The sites of one file.
struct FileSites {
  Attribution attribution = Attribution::kFileName;
  std::string static_libc;       // kStaticLibc: the libc.a used
  std::string static_libc_error; // kNoStaticLibc: why there is none
  std::vector<SyscallSite> sites;
  std::vector<TscSite> tsc_sites; // in address order
  std::vector<CpuSite> cpu_sites; // in address order
};

// The rdtsc, rdtscp and CPU-identity instructions of a file.
struct InstructionSites {
  std::vector<TscSite> tsc;
  std::vector<CpuSite> cpu;
};

// The system call instructions of a file, in address order, each with its
// origin. Capstone disassembles every executable section (or, without
// section headers, every executable PT_LOAD segment), restarting at each
// function symbol and resynchronising one byte on after bytes it cannot
// decode. libc.so.* is libc's and ld-linux* is ld.so's. In any other
// statically linked file (no interpreter, no DT_NEEDED: a static
// executable) a site is libc's when the function symbol whose extent holds
// it (a symbol of size 0 reaches up to the next) has the name and size of a
// function of the system's libc.a (find_static_libc), inline when that
// function is not libc.a's, and unknown outside every function symbol. Any
// other file's sites are inline.
// The rdtsc, rdtscp and CPU-identity instructions are found by the same
// sweep.
[[nodiscard]] Result<FileSites> scan_file(const ElfFile &elf);

// Only the rdtsc, rdtscp and CPU-identity instructions of a file, by the
// sweep of scan_file, in address order: no origins told (no libc.a read).
[[nodiscard]] Result<InstructionSites>
scan_instruction_sites(const ElfFile &elf);

// "cpuid", "rdrand", "rdseed" or "rdpid".
[[nodiscard]] std::string_view instruction_name(CpuInstruction instruction);

// The x86-64 name of a system call number ("read"), or "".
[[nodiscard]] std::string syscall_name(long number);
// The x86-64 number of a system call name ("write"), or nothing.
[[nodiscard]] std::optional<long> syscall_number(const std::string &name);

// "inline", "libc", "ld.so" or "unknown".
[[nodiscard]] std::string_view origin_name(SiteOrigin origin);

} // namespace cmc::decoder
