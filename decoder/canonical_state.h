#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "decoder/process_image.h"
#include "decoder/state_location.h"
#include "util/fingerprint.h"

namespace cmc::decoder {

// How the heap is hashed.
enum class HeapModel {
  // glibc malloc's arenas walked: in-use chunks reached from the roots
  // (globals, stacks, registers) numbered breadth-first, pointers hashed
  // as (chunk number, offset), free chunks, unreachable chunks and the
  // allocator's bookkeeping left out. When no glibc arena is found (no
  // malloc yet, another allocator) the heap's memory is hashed as read,
  // and says so, but pointers into named mappings are still tokens.
  kCanonical,
  // Every byte as read, pointers included (but the PLT slots, blanked in
  // both models: ProcessImage::plt_slots).
  kRaw,
};

// What the heap walk found.
struct HeapSummary {
  // "glibc" (with the thread arenas it could not walk, hashed as read,
  // and why), or why the heap was hashed raw: "raw bytes (no
  // glibc malloc arena found: ...)", "raw bytes (--dedup raw)".
  std::string allocator;
  bool canonical = false;
  std::size_t arenas = 0;         // walked, main_arena included
  std::size_t chunks = 0;         // in use, reached from the roots
  std::size_t garbage_chunks = 0; // in use but unreachable: left out
  std::size_t garbage_bytes = 0;
  std::size_t free_chunks = 0; // left out
};

struct CanonicalOptions {
  HeapModel heap = HeapModel::kCanonical;
  // Keep the canonical bytes and their pieces (for naming the bytes two
  // states differ in); the fingerprint is the same either way.
  bool keep_bytes = false;
  // Bytes that read as zero (volatile bytes, --mask-volatile).
  std::span<const Location> mask;
};

struct CanonicalState {
  // Equal for two images that hold the same data, whatever the addresses
  // malloc gave it; the thread and process ids are hashed as the thread's
  // number.
  Fingerprint fingerprint;
  std::vector<std::byte> bytes; // with keep_bytes
  std::vector<StatePiece> pieces;
  HeapSummary heap;
  std::size_t bytes_hashed = 0;
};

[[nodiscard]] CanonicalState canonicalize(const ProcessImage &image,
                                          const CanonicalOptions &options);

// The locations where a and b (kept bytes of two canonical states) differ,
// in order; a piece only one of them has is one location (offset 0).
[[nodiscard]] std::vector<Location> differences(const CanonicalState &a,
                                                const CanonicalState &b);

} // namespace cmc::decoder
