#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/process_image.h"
#include "decoder/state_location.h"

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
  [[nodiscard]] std::uint64_t word(std::size_t index) const {
    std::uint64_t value = 0;
    std::memcpy(&value, data + index * 8, sizeof(value));
    return value;
  }
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
  // Heap chunk number (from 1) of usable_size bytes at address.
  PieceBytes add_chunk(std::size_t number, std::span<const std::byte> bytes,
                       std::uint64_t address);

  // Each thread's id in its thread control block (glibc's struct pthread,
  // at fs_base) becomes the thread's number where the piece, the bytes of
  // the target at address, holds it: the kernel gives a thread another id
  // each run (pids are small numbers that wrap, so a plain value equal to
  // one is no evidence of an id). Ids the program copied elsewhere (a
  // stored getpid()) stay as they are: volatile bytes, named as such.
  void mark_thread_ids(PieceBytes piece, std::uint64_t address) const;

  // Names the last piece's bytes by the data objects of a file's section
  // (kept with the pieces' names only).
  void name_symbols(std::shared_ptr<const std::vector<Symbol>> symbols,
                    std::uint64_t link_address);

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
  struct ThreadId {
    std::uint64_t address; // of the id in the thread's control block
    std::uint32_t id;
    std::uint32_t number;
  };
  std::vector<ThreadId> thread_ids_;
};

} // namespace cmc::decoder
