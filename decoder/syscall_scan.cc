#include "decoder/syscall_scan.h"

#include <capstone/capstone.h>
#include <seccomp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "decoder/capstone.h"
#include "decoder/library_search.h"

namespace cmc::decoder {
namespace {

// Capstone, with details, and its instruction buffer.
struct Disassembler {
  Capstone capstone;
  Instructions insn;
};

// Values known to be in registers, from immediates and copies of them,
// along a linear sweep: a heuristic, reset at every function start.
class KnownRegisters {
public:
  void reset() { values_.fill(std::nullopt); }
  [[nodiscard]] std::optional<long> eax() const { return values_[0]; }

  void step(csh handle, const cs_insn &insn) {
    const cs_x86 &x86 = insn.detail->x86;
    std::optional<long> value;
    bool defines = false;
    if ((insn.id == X86_INS_MOV || insn.id == X86_INS_XOR) &&
        x86.op_count == 2 && x86.operands[0].type == X86_OP_REG) {
      const cs_x86_op &source = x86.operands[1];
      if (insn.id == X86_INS_XOR) {
        defines =
            source.type == X86_OP_REG && source.reg == x86.operands[0].reg;
        value = 0;
      } else if (source.type == X86_OP_IMM) {
        defines = true;
        value = static_cast<long>(source.imm);
      } else if (source.type == X86_OP_REG) {
        const X86Register from = x86_register(source.reg);
        defines = from.index >= 0 && from.whole;
        value = defines ? values_[from.index] : std::nullopt;
      }
    }
    forget_written(handle, insn);
    if (!defines)
      return;
    // Only a define has a register as its first operand.
    const X86Register to = x86_register(x86.operands[0].reg);
    if (to.index >= 0 && to.whole)
      values_[to.index] = value;
  }

private:
  void forget_written(csh handle, const cs_insn &insn) {
    cs_regs read{};
    cs_regs written{};
    std::uint8_t read_count = 0;
    std::uint8_t written_count = 0;
    if (cs_regs_access(handle, &insn, read, &read_count, written,
                       &written_count) != CS_ERR_OK) {
      reset();
      return;
    }
    for (std::uint8_t i = 0; i < written_count; ++i)
      if (const X86Register name = x86_register(written[i]); name.index >= 0)
        values_[name.index] = std::nullopt;
  }

  std::array<std::optional<long>, 16> values_{};
};

const char *syscall_kind(const cs_insn &insn) {
  if (insn.id == X86_INS_SYSCALL)
    return "syscall";
  if (insn.id == X86_INS_SYSENTER)
    return "sysenter";
  if (insn.id == X86_INS_INT && insn.detail->x86.op_count == 1 &&
      insn.detail->x86.operands[0].imm == 0x80)
    return "int 0x80";
  return nullptr;
}

// The system call and time stamp counter instructions of some code.
struct CodeSites {
  std::vector<SyscallSite> syscalls;
  std::vector<TscSite> tsc;
  std::vector<CpuSite> cpu;
};

// Capstone 4 has no rdpid: it decodes f3 0f c7 /7 (rdpid) as rdseed, whose
// encoding is the same without the f3 prefix.
std::optional<CpuInstruction> cpu_instruction(const cs_insn &insn) {
  switch (insn.id) {
  case X86_INS_CPUID:
    return CpuInstruction::kCpuid;
  case X86_INS_RDRAND:
    return CpuInstruction::kRdrand;
  case X86_INS_RDSEED: {
    const auto *end = insn.bytes + insn.size;
    const auto *escape = std::find(insn.bytes, end, std::uint8_t{0x0f});
    return std::find(insn.bytes, escape, std::uint8_t{0xf3}) != escape
               ? CpuInstruction::kRdpid
               : CpuInstruction::kRdseed;
  }
  default:
    return std::nullopt;
  }
}

void note_site(const cs_insn &insn, const Symbol *function,
               const KnownRegisters &known, CodeSites &sites) {
  if (const char *kind = syscall_kind(insn))
    sites.syscalls.push_back({insn.address, kind,
                              function != nullptr ? *function : Symbol{},
                              known.eax()});
  else if (insn.id == X86_INS_RDTSC || insn.id == X86_INS_RDTSCP)
    sites.tsc.push_back({insn.address, static_cast<std::uint8_t>(insn.size),
                         insn.id == X86_INS_RDTSCP});
  else if (const auto cpu = cpu_instruction(insn))
    sites.cpu.push_back({insn.address, *cpu});
}

// Sweeps [range.address, range.address + size) linearly, restarting at the
// function starts inside it.
void sweep(const Disassembler &cs, const CodeRange &range,
           const std::vector<Symbol> &functions, CodeSites &sites) {
  const std::uint64_t end = range.address + range.bytes.size();
  auto next_function = std::lower_bound(
      functions.begin(), functions.end(), range.address,
      [](const Symbol &f, std::uint64_t address) { return f.value < address; });
  const Symbol *current = nullptr;
  KnownRegisters known;
  std::uint64_t address = range.address;
  while (address < end) {
    std::uint64_t limit = end;
    while (next_function != functions.end() &&
           next_function->value <= address) {
      current = &*next_function++;
      known.reset();
    }
    if (next_function != functions.end() && next_function->value < end)
      limit = next_function->value;
    const auto *code = reinterpret_cast<const std::uint8_t *>(
        range.bytes.data() + (address - range.address));
    std::size_t size = limit - address;
    const std::uint64_t start = address;
    cs_insn &insn = cs.insn.get().front();
    while (cs_disasm_iter(cs.capstone.get(), &code, &size, &address, &insn)) {
      note_site(insn, current, known, sites);
      known.step(cs.capstone.get(), insn);
    }
    // Bytes Capstone cannot decode (data, or AVX-512 that Capstone 4
    // lacks): skip one and go on.
    if (address < limit || address == start) {
      ++address;
      known.reset();
    }
  }
}

Result<CodeSites> scan_code(const ElfFile &elf,
                            const std::vector<Symbol> &functions) {
  auto capstone = Capstone::open(true);
  if (!capstone)
    return Error{"cannot start the Capstone disassembler"};
  auto insn = Instructions::buffer(*capstone);
  if (!insn)
    return Error{"cannot start the Capstone disassembler"};
  const Disassembler cs{std::move(*capstone), std::move(*insn)};
  CodeSites sites;
  for (const CodeRange &range : elf.code())
    sweep(cs, range, functions, sites);
  const auto by_address = [](const auto &a, const auto &b) {
    return a.address < b.address;
  };
  std::sort(sites.syscalls.begin(), sites.syscalls.end(), by_address);
  std::sort(sites.tsc.begin(), sites.tsc.end(), by_address);
  std::sort(sites.cpu.begin(), sites.cpu.end(), by_address);
  return sites;
}

// libc.so.* is libc, ld-linux* is ld.so.
std::optional<SiteOrigin> system_origin(const std::string &path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  if (name.starts_with("libc.so"))
    return SiteOrigin::kLibc;
  if (name.starts_with("ld-linux"))
    return SiteOrigin::kLoader;
  return std::nullopt;
}

// A symbol of size 0 (assembly without .size, such as glibc's
// __restore_rt) reaches up to the next function symbol.
SiteOrigin static_origin(const SyscallSite &site, const StaticLibrary &libc) {
  const Symbol &function = site.function;
  if (function.name.empty() ||
      (function.size != 0 && site.address >= function.value + function.size))
    return SiteOrigin::kUnknown;
  return libc.defines(function) ? SiteOrigin::kLibc : SiteOrigin::kInline;
}

// Tells the origins of a static executable's sites, which have function
// symbols, by the system's libc.a.
void attribute_static(FileSites &file) {
  const auto path = find_static_libc();
  auto libc = path ? StaticLibrary::open(*path)
                   : Result<StaticLibrary>(Error{
                         "no libc.a found beside libc.so.6 or in the default "
                         "directories (Debian package libc6-dev)"});
  if (!libc) {
    file.attribution = Attribution::kNoStaticLibc;
    file.static_libc_error = libc.error().message;
    return;
  }
  file.attribution = Attribution::kStaticLibc;
  file.static_libc = libc->path();
  for (SyscallSite &site : file.sites)
    site.origin = static_origin(site, *libc);
}

} // namespace

std::string syscall_name(long number) {
  char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64,
                                                static_cast<int>(number));
  std::string text = name != nullptr ? name : "";
  std::free(name);
  return text;
}

std::optional<long> syscall_number(const std::string &name) {
  const int number =
      seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name.c_str());
  return number >= 0 ? std::optional<long>(number) : std::nullopt;
}

std::string_view origin_name(SiteOrigin origin) {
  switch (origin) {
  case SiteOrigin::kInline:
    return "inline";
  case SiteOrigin::kLibc:
    return "libc";
  case SiteOrigin::kLoader:
    return "ld.so";
  case SiteOrigin::kUnknown:
    return "unknown";
  }
  return "";
}

Result<FileSites> scan_file(const ElfFile &elf) {
  const std::vector<Symbol> functions = elf.functions();
  auto sites = scan_code(elf, functions);
  if (!sites)
    return sites.error();
  FileSites file{Attribution::kFileName,
                 "",
                 "",
                 std::move(sites->syscalls),
                 std::move(sites->tsc),
                 std::move(sites->cpu)};
  const auto system = system_origin(elf.path());
  if (system || elf.has_interpreter() || !elf.needed().empty()) {
    for (SyscallSite &site : file.sites)
      site.origin = system.value_or(SiteOrigin::kInline);
  } else if (functions.empty()) {
    file.attribution = Attribution::kNoSymbols;
    for (SyscallSite &site : file.sites)
      site.origin = SiteOrigin::kUnknown;
  } else {
    attribute_static(file);
  }
  return file;
}

Result<InstructionSites> scan_instruction_sites(const ElfFile &elf) {
  auto sites = scan_code(elf, elf.functions());
  if (!sites)
    return sites.error();
  return InstructionSites{std::move(sites->tsc), std::move(sites->cpu)};
}

std::string_view instruction_name(CpuInstruction instruction) {
  switch (instruction) {
  case CpuInstruction::kCpuid:
    return "cpuid";
  case CpuInstruction::kRdrand:
    return "rdrand";
  case CpuInstruction::kRdseed:
    return "rdseed";
  case CpuInstruction::kRdpid:
    return "rdpid";
  }
  return "";
}

} // namespace cmc::decoder
