#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/symbol.h"

namespace cmc::decoder {

// A named byte of a canonical state: piece and offset in it, as
// "heap chunk 12 (64 B)" + 8, ".bss of beanstalkd" + 0x40,
// "stack of thread 2" + 16, "registers of thread 1" + 8 (r14; + 13 is
// "r14+5"),
// "fd 7" + 8 (position).
struct Location {
  std::string piece;
  std::size_t offset = 0;
  friend bool operator==(const Location &, const Location &) = default;
  friend auto operator<=>(const Location &, const Location &) = default;
  [[nodiscard]] std::string describe() const; // "heap chunk 12 (64 B)+8"
};

// A part of the canonical bytes.
struct StatePiece {
  std::string name;
  std::size_t offset = 0; // in CanonicalState::bytes
  std::size_t size = 0;
  // A section of a file: the file's data objects and the piece's first
  // byte's link-time address (MemorySegment::symbols).
  std::shared_ptr<const std::vector<Symbol>> symbols{};
  std::uint64_t link_address = 0;
  // A heap chunk: where its user bytes are in the target, which tells the
  // same chunk in two states of one run whatever its number.
  std::uint64_t address = 0;
};

// The piece names of a registers piece's words, in user_regs_struct order.
[[nodiscard]] std::span<const std::string_view> register_names();

} // namespace cmc::decoder
