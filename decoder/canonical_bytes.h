#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/canonical_state.h"
#include "decoder/process_image.h"

namespace cmc::decoder {

// What a canonical 8-byte word holds instead of the bytes read. Each word
// of a piece has a nibble of these bits after the piece's bytes, so that a
// token is never taken for a plain word of another state that happens to
// have the same value.
enum TokenBit : std::uint8_t {
  kLowThread = 1,      // the low 4 bytes are a thread's number
  kHighThread = 2,     // the high 4 bytes are a thread's number
  kChunkPointer = 4,   // (heap chunk number, offset)
  kMappingPointer = 8, // (mapping index in the "mappings" piece, offset)
};

// The size of the token nibbles that follow a piece of size bytes.
[[nodiscard]] constexpr std::size_t token_map_size(std::size_t size) {
  return ((size + 7) / 8 + 1) / 2;
}

// A piece's bytes and token nibbles inside CanonicalBytes, valid until the
// next piece is added.
struct PieceBytes {
  std::byte *data = nullptr;
  std::uint8_t *tokens = nullptr;
  std::size_t size = 0;

  [[nodiscard]] std::size_t words() const { return size / 8; }
  [[nodiscard]] std::uint64_t word(std::size_t index) const;
  // Replaces word index by a token of kind bit.
  void set_token(std::size_t index, std::uint64_t token, TokenBit bit);
  void clear_tokens(std::size_t index);
};

// The canonical bytes of a state as they are built: pieces one after
// another, each a header (kind, name or size, extra), its bytes, and the
// token nibbles. The fingerprint is the hash of all of it.
class CanonicalBytes {
public:
  // out is reused (cleared here); names: keep each piece's name for
  // StatePiece (keep_bytes or a mask), else only the hash sees them.
  CanonicalBytes(std::vector<std::byte> &out, const ProcessImage &image,
                 bool names);

  // A piece named name; extra is hashed with it (a raw segment's address).
  PieceBytes add_named(std::string_view name, std::uint64_t extra,
                       std::span<const std::byte> bytes);
  // Heap chunk number (from 1) of usable_size bytes.
  PieceBytes add_chunk(std::size_t number, std::span<const std::byte> bytes);

  // Thread ids in the 4-byte halves of the piece's words become the
  // thread's number (words already made tokens are left alone): the kernel
  // gives a thread another id each run, so the id itself is no state.
  void mark_thread_ids(PieceBytes piece) const;
  // Same for one word (a register, descriptor data).
  void mark_thread_ids(PieceBytes piece, std::size_t index) const;

  // Zeroes the masked bytes (and drops their words' tokens).
  void apply_mask(std::span<const Location> mask);

  [[nodiscard]] std::vector<StatePiece> take_pieces() {
    return std::move(pieces_);
  }

private:
  PieceBytes append(std::uint64_t kind, std::uint64_t header,
                    std::string_view name, std::uint64_t extra,
                    std::span<const std::byte> bytes);

  std::vector<std::byte> &out_;
  bool names_;
  std::vector<StatePiece> pieces_;
  // (id, number) sorted by id; the pid is thread 1's number.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> thread_ids_;
  std::uint32_t lowest_id_ = 0;
  std::uint32_t highest_id_ = 0;
};

// The piece names of a registers piece's words, in user_regs_struct order.
[[nodiscard]] std::span<const std::string_view> register_names();

} // namespace cmc::decoder
