#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "decoder/canonical_state.h"

namespace cmc::decoder {

// What a word of a canonical state holds, as two states of one run can
// compare it: a pointer into a chunk by the chunk's address (its number
// differs between states), a pointer into a mapping by the mapping's name.
struct WordValue {
  enum class Kind { kPlain, kChunk, kFreed, kMapping };
  Kind kind = Kind::kPlain;
  std::uint64_t value = 0;  // kPlain: the word; kChunk: the chunk's address
  std::size_t number = 0;   // kChunk: the chunk's number in its state
  std::uint64_t offset = 0; // into the chunk or mapping
  std::string_view mapping; // kMapping: its name
  bool mangled = false;     // stored as glibc's PTR_MANGLE stores it

  [[nodiscard]] bool pointer() const { return kind != Kind::kPlain; }
  // The same data: a chunk pointer to the same chunk (by address, else by
  // number), a mapping pointer to the same place, the same plain word.
  [[nodiscard]] bool same(const WordValue &other) const;
};

// A canonical state's kept bytes (CanonicalOptions::keep_bytes) read by
// name: its pieces, its heap chunks by number and by address, the words
// that are pointers and what they point to, the data objects its globals
// are.
class NamedState {
public:
  explicit NamedState(const CanonicalState &state);

  [[nodiscard]] const std::vector<StatePiece> &pieces() const {
    return state_.pieces;
  }
  [[nodiscard]] std::span<const std::byte> bytes(const StatePiece &piece) const;
  [[nodiscard]] const StatePiece *piece(std::string_view name) const;
  // The chunk whose user bytes start at address, if any.
  [[nodiscard]] const StatePiece *chunk_at(std::uint64_t address) const;
  // Whether the word at offset (a multiple of 8) of piece is a pointer.
  [[nodiscard]] bool is_pointer(const StatePiece &piece,
                                std::size_t offset) const;
  // The word at offset (a multiple of 8, the word whole in piece).
  [[nodiscard]] WordValue word(const StatePiece &piece,
                               std::size_t offset) const;
  // "chunk 2+8", "cells", ".bss of kv+0x10", "a freed chunk"; a plain
  // word as "null" or its value in hex.
  [[nodiscard]] std::string target_text(const WordValue &value) const;
  // The data object that holds byte offset of piece, and the byte's
  // offset in it; nullptr when none does.
  [[nodiscard]] static const Symbol *
  symbol_at(const StatePiece &piece, std::size_t offset, std::size_t &into);
  // Bytes [begin, end) of piece, short: text quoted, pointers as
  // "&chunk 2", zero stretches as 0, other bytes in hex; at most
  // max_items items, then "...".
  [[nodiscard]] std::string preview(const StatePiece &piece, std::size_t begin,
                                    std::size_t end,
                                    std::size_t max_items = 8) const;

private:
  [[nodiscard]] std::uint8_t nibble(const StatePiece &piece,
                                    std::size_t word) const;
  // The preview item at pos, moving pos past it.
  [[nodiscard]] std::string preview_item(const StatePiece &piece,
                                         std::size_t &pos,
                                         std::size_t end) const;

  const CanonicalState &state_;
  std::unordered_map<std::string_view, const StatePiece *> by_name_;
  std::vector<const StatePiece *> chunks_; // by number - 1
  std::unordered_map<std::uint64_t, const StatePiece *> by_address_;
  std::vector<std::string_view> mappings_; // by index
};

// The number of a piece named "heap chunk N (S B)", 0 for another piece.
[[nodiscard]] std::size_t chunk_number(std::string_view piece);
// A byte as text would show it (a printable ASCII character).
[[nodiscard]] bool printable(std::byte byte);
// '"text"', C escapes for what is not printable.
[[nodiscard]] std::string quoted(std::span<const std::byte> bytes);
// "00 01 02", the first max bytes, then "... (N bytes)".
[[nodiscard]] std::string hex_bytes(std::span<const std::byte> bytes,
                                    std::size_t max = 8);

} // namespace cmc::decoder
