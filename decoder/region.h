#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "decoder/elf_file.h"
#include "util/result.h"

namespace cmc::decoder {

// A --region argument: SYMBOL, SYMBOL:LEN or SYMBOL+OFF:LEN (OFF+LEN below
// 2^64).
struct RegionSpec {
  std::string text; // as written
  std::string symbol;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> length;
};

[[nodiscard]] Result<RegionSpec> parse_region_spec(std::string_view text);

// A region resolved against the executable: link-time address and length.
struct Region {
  std::string name; // RegionSpec::text
  std::uint64_t link_address = 0;
  std::uint64_t length = 0;
};

// Looks the symbol up (.symtab, then .dynsym), or with a leading dot the
// loaded section of that name (.bss, .data); the length defaults to the
// symbol's or section's size. Fails for an unknown name, an empty region, or
// one that does not lie inside the PT_LOAD segment that holds the symbol.
[[nodiscard]] Result<Region> resolve_region(const RegionSpec &spec,
                                            const ElfFile &elf);

} // namespace cmc::decoder
