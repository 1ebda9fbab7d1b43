#pragma once

#include <cstdint>
#include <string>

namespace cmc::decoder {

// A named range of an ELF file: a symbol or a section.
struct Symbol {
  std::string name;
  std::uint64_t value = 0; // link-time address
  std::uint64_t size = 0;
};

} // namespace cmc::decoder
