#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "decoder/process_image.h"
#include "util/result.h"

namespace cmc::decoder {

// A glibc malloc chunk (malloc.c's malloc_chunk): a 16-byte header
// (prev_size, size with flags), then the user's bytes.
struct HeapChunk {
  std::uint64_t address = 0; // of the header
  std::uint64_t size = 0;    // chunksize(): header included, flags not
  std::size_t segment = 0;   // index in ProcessImage::memory
  bool mmapped = false;

  [[nodiscard]] std::uint64_t user_begin() const { return address + 16; }
  // An in-use chunk also owns the next chunk's prev_size field; an mmapped
  // chunk has no next chunk. A pointer to user_end() (one past the end)
  // still means this chunk: the next chunk's user bytes start 8 later.
  [[nodiscard]] std::uint64_t user_end() const {
    return address + size + (mmapped ? 0 : 8);
  }
};

// Bytes of malloc's own state in a root segment, left out of the hash.
struct Bookkeeping {
  std::size_t segment = 0;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
};

// What the walk of glibc's main arena found.
struct GlibcHeap {
  std::vector<HeapChunk> in_use;    // by address
  std::vector<HeapChunk> free_list; // [heap]'s free chunks, by address
  std::size_t free_chunks = 0;
  // Segments that hold only chunks and malloc's state ([heap], mmapped
  // chunks): not roots.
  std::vector<bool> chunk_segments;
  std::vector<Bookkeeping> bookkeeping; // main_arena, tcache_key
  // Arenas of other threads; their heaps stay roots, hashed as read.
  std::size_t other_arenas = 0;
};

// Walks glibc 2.36's (x86-64) main arena: finds main_arena in a writable
// data segment by its shape, walks [heap] from its start to the top chunk,
// reads the tcache and fastbin lists (safe-linked), finds the mmapped
// chunks. Fails with the reason when the image does not hold a glibc heap
// this walk understands.
[[nodiscard]] Result<GlibcHeap> walk_glibc_heap(const ProcessImage &image);

} // namespace cmc::decoder
