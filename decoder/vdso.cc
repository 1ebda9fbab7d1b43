#include "decoder/vdso.h"

#include <capstone/capstone.h>
#include <sys/syscall.h>

#include <array>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "decoder/capstone.h"
#include "decoder/elf_file.h"

namespace cmc::decoder {
namespace {

// The vDSO functions cmc routes to a system call; x86-64 passes their
// arguments in the system call registers already (at most three).
struct KnownFunction {
  std::string_view name;
  VdsoStub stub;
  long syscall;
};

constexpr std::array kKnown{
    KnownFunction{"__vdso_clock_gettime", VdsoStub::kSyscall,
                  SYS_clock_gettime},
    KnownFunction{"__vdso_gettimeofday", VdsoStub::kSyscall, SYS_gettimeofday},
    KnownFunction{"__vdso_time", VdsoStub::kSyscall, SYS_time},
    KnownFunction{"__vdso_clock_getres", VdsoStub::kSyscall, SYS_clock_getres},
    KnownFunction{"__vdso_getcpu", VdsoStub::kSyscall, SYS_getcpu},
    KnownFunction{"__vdso_getrandom", VdsoStub::kEnosys, -1},
};

constexpr std::byte operator""_b(unsigned long long value) {
  return static_cast<std::byte>(value);
}

void append_imm32(std::vector<std::byte> &code, std::int32_t value) {
  for (int shift = 0; shift < 32; shift += 8)
    code.push_back(static_cast<std::byte>((value >> shift) & 0xff));
}

// Fills in the stub's bytes: mov eax, imm32; [syscall;] ret, or ud2.
void write_stub(VdsoFunction &function) {
  auto &code = function.patch;
  switch (function.stub) {
  case VdsoStub::kSyscall:
    code.push_back(0xb8_b);
    append_imm32(code, static_cast<std::int32_t>(function.syscall));
    function.syscall_offset = function.offset + code.size();
    code.insert(code.end(), {0x0f_b, 0x05_b, 0xc3_b});
    break;
  case VdsoStub::kEnosys:
    code.push_back(0xb8_b);
    append_imm32(code, -ENOSYS);
    code.push_back(0xc3_b);
    break;
  case VdsoStub::kTrap:
    code.insert(code.end(), {0x0f_b, 0x0b_b});
    break;
  }
}

// Decodes the instructions of code that the patch overwrites; returns the
// first one's text, or an error when they do not all decode.
Result<std::string> check_entry(std::span<const std::byte> code,
                                std::uint64_t address, std::size_t patched,
                                const std::string &name) {
  const auto capstone = Capstone::open(false);
  if (!capstone)
    return capstone.error();
  const Instructions decoded =
      Instructions::disassemble(*capstone, code, address);
  const std::span<cs_insn> insn = decoded.get();
  std::size_t covered = 0;
  std::string first;
  for (std::size_t i = 0; i < insn.size() && covered < patched; ++i) {
    if (i == 0)
      first = fmt::format("{} {}", insn[i].mnemonic, insn[i].op_str);
    covered += insn[i].size;
  }
  if (covered < patched)
    return Error{fmt::format("the vDSO function {} does not decode as x86-64 "
                             "code; cmc cannot patch it",
                             name)};
  return first;
}

VdsoFunction plan_for(const Symbol &symbol, std::uint64_t base) {
  VdsoFunction function{symbol.name, symbol.value - base, symbol.size};
  for (const KnownFunction &known : kKnown)
    if (known.name == symbol.name) {
      function.stub = known.stub;
      function.syscall = known.syscall;
    }
  write_stub(function);
  return function;
}

} // namespace

Result<std::vector<VdsoFunction>>
plan_vdso_patches(std::span<const std::byte> image) {
  auto elf = ElfFile::from_image(
      "the vDSO", std::vector<std::byte>(image.begin(), image.end()));
  if (!elf)
    return elf.error();
  const std::uint64_t base = elf->load_base();
  std::vector<VdsoFunction> plan;
  for (const Symbol &symbol : elf->functions()) {
    VdsoFunction function = plan_for(symbol, base);
    if (function.size < function.patch.size() ||
        function.offset + function.size > image.size())
      return Error{fmt::format("the vDSO function {} ({} bytes) is too short "
                               "for cmc's {}-byte patch",
                               function.name, function.size,
                               function.patch.size())};
    auto first =
        check_entry(image.subspan(function.offset, function.size), symbol.value,
                    function.patch.size(), function.name);
    if (!first)
      return first.error();
    function.first_instruction = std::move(*first);
    plan.push_back(std::move(function));
  }
  if (plan.empty())
    return Error{"the vDSO exports no function"};
  return plan;
}

} // namespace cmc::decoder
