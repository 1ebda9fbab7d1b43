#include "tracer/capture/noreturn_calls.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>

#include "decoder/elf_file.h"

namespace cmc::tracer {
namespace {

// The functions that never return to their caller and unwind no frame.
constexpr std::array<std::string_view, 19> kNoReturn{
    "exit",           "_exit",
    "_Exit",          "abort",
    "quick_exit",     "__stack_chk_fail",
    "__assert_fail",  "__assert_perror_fail",
    "__fortify_fail", "__chk_fail",
    "__libc_fatal",   "err",
    "errx",           "verr",
    "verrx",          "longjmp",
    "_longjmp",       "siglongjmp",
    "__longjmp_chk"};

// A PLT stub's jump through its GOT slot (`jmp *slot(%rip)`, after an
// endbr64 and with a bnd prefix or not): the slot's address.
std::optional<std::uint64_t> plt_slot(const decoder::MemoryReader &read,
                                      std::uint64_t address) {
  const std::string code = read(address, 16);
  constexpr std::string_view kEndbr64("\xf3\x0f\x1e\xfa", 4);
  std::size_t at = code.starts_with(kEndbr64) ? kEndbr64.size() : 0;
  if (at < code.size() && code[at] == '\xf2') // bnd
    ++at;
  if (at + 6 > code.size() || code[at] != '\xff' || code[at + 1] != '\x25')
    return std::nullopt;
  std::int32_t displacement = 0;
  std::memcpy(&displacement, code.data() + at + 2, 4);
  return address + at + 6 +
         static_cast<std::uint64_t>(std::int64_t{displacement});
}

} // namespace

const std::set<std::uint64_t> &
NoReturnCalls::of_file(const decoder::Mapping &mapping) {
  const File key{mapping.dev_major, mapping.dev_minor, mapping.inode};
  if (const auto found = files_.find(key); found != files_.end())
    return found->second;
  std::set<std::uint64_t> &offsets = files_[key];
  auto file = decoder::ElfFile::open(mapping.path);
  if (!file)
    return offsets;
  for (const std::string_view name : kNoReturn) {
    const auto symbol = file->find_symbol(name);
    if (!symbol)
      continue;
    for (const decoder::LoadSegment &segment : file->loads())
      if (symbol->value >= segment.vaddr &&
          symbol->value < segment.vaddr + segment.filesz)
        offsets.insert(symbol->value - segment.vaddr + segment.offset);
  }
  return offsets;
}

bool NoReturnCalls::never_returns(const decoder::MemoryReader &read,
                                  std::span<const decoder::Mapping> maps,
                                  std::uint64_t address) {
  std::uint64_t function = address;
  if (const auto slot = plt_slot(read, address)) {
    const std::string word = read(*slot, 8);
    if (word.size() != 8)
      return false;
    std::memcpy(&function, word.data(), 8);
  }
  const decoder::Mapping *mapping = decoder::mapping_holding(maps, function);
  if (mapping == nullptr || mapping->inode == 0)
    return false;
  return of_file(*mapping).contains(function - mapping->start +
                                    mapping->offset);
}

} // namespace cmc::tracer
