#include "decoder/region.h"

#include <charconv>

#include <fmt/format.h>

namespace cmc::decoder {
namespace {

// Decimal, or hexadecimal with 0x.
std::optional<std::uint64_t> parse_number(std::string_view text) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t value = 0;
  const auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    return std::nullopt;
  return value;
}

// The loaded segment that holds the link-time address, or nullptr.
const LoadSegment *segment_of(const ElfFile &elf, std::uint64_t address) {
  for (const LoadSegment &load : elf.loads())
    if (address >= load.vaddr && address - load.vaddr < load.memsz)
      return &load;
  return nullptr;
}

} // namespace

Result<RegionSpec> parse_region_spec(std::string_view text) {
  RegionSpec spec;
  spec.text = std::string(text);
  const auto bad = [&](std::string_view why) {
    return Error{fmt::format("bad --region '{}': {} (expected SYMBOL, "
                             "SYMBOL:LEN or SYMBOL+OFF:LEN)",
                             text, why)};
  };
  const auto colon = text.find(':');
  std::string_view head = text.substr(0, colon);
  if (colon != std::string_view::npos) {
    const auto length = parse_number(text.substr(colon + 1));
    if (!length || *length == 0)
      return bad("the length must be a positive number below 2^64");
    spec.length = length;
  }
  const auto plus = head.find('+');
  if (plus != std::string_view::npos) {
    const auto offset = parse_number(head.substr(plus + 1));
    if (!offset)
      return bad("the offset must be a number below 2^64");
    spec.offset = *offset;
    head = head.substr(0, plus);
  }
  if (spec.length && *spec.length > UINT64_MAX - spec.offset)
    return bad("OFF+LEN is past the end of the address space");
  if (head.empty())
    return bad("no symbol");
  spec.symbol = std::string(head);
  return spec;
}

Result<Region> resolve_region(const RegionSpec &spec, const ElfFile &elf) {
  // ".bss", ".data": a section, whose headers survive stripping.
  const bool section = spec.symbol.starts_with('.');
  const auto symbol =
      section ? elf.find_section(spec.symbol) : elf.find_symbol(spec.symbol);
  if (!symbol && section)
    return Error{
        fmt::format("{} has no loaded section '{}'", elf.path(), spec.symbol)};
  if (!symbol)
    return Error{fmt::format("symbol '{}' is not in {} (.symtab or .dynsym)",
                             spec.symbol, elf.path())};
  std::uint64_t length = 0;
  if (spec.length) {
    length = *spec.length;
  } else if (symbol->size > spec.offset) {
    length = symbol->size - spec.offset;
  } else {
    return Error{fmt::format(
        "region '{}' is empty: symbol '{}' has size {}; give a length",
        spec.text, spec.symbol, symbol->size)};
  }
  const LoadSegment *segment = segment_of(elf, symbol->value);
  if (segment == nullptr)
    return Error{fmt::format("'{}' (0x{:x}) is in no loaded segment of {}",
                             spec.symbol, symbol->value, elf.path())};
  // Bytes from the symbol to the end of its segment: the region must lie
  // inside them, or it would read another mapping or wrap around.
  const std::uint64_t room = segment->vaddr + segment->memsz - symbol->value;
  if (spec.offset >= room || length > room - spec.offset)
    return Error{fmt::format("region '{}' ({} bytes at offset {} of '{}') "
                             "does not fit in the loaded segment that holds "
                             "'{}': {} bytes from it to the segment's end",
                             spec.text, length, spec.offset, spec.symbol,
                             spec.symbol, room)};
  return Region{spec.text, symbol->value + spec.offset, length};
}

} // namespace cmc::decoder
