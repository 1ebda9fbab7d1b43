#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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

// One heap of a thread arena (arena.c's heap_info at the start of a 64
// MiB-aligned mapping, the arena's malloc_state after it in its first
// heap): the segment that is its read-write part.
struct ArenaHeap {
  std::size_t segment = 0;
  std::size_t arena = 0; // 1 for the first arena on main_arena's list
  std::size_t heap = 0;  // 1 for the arena's first heap
  std::size_t heaps = 1; // how many heaps the arena has
};

// What the walk of glibc's arenas found.
struct GlibcHeap {
  std::vector<HeapChunk> in_use;    // by address
  std::vector<HeapChunk> free_list; // free chunks of the arenas, by address
  std::size_t free_chunks = 0;
  // Segments that hold only chunks and malloc's state ([heap], the heaps
  // of thread arenas, mmapped chunks): not roots.
  std::vector<bool> chunk_segments;
  std::vector<Bookkeeping> bookkeeping; // main_arena, tcache_key
  std::vector<ArenaHeap> arena_heaps;   // of the walked thread arenas
  std::size_t arenas = 1;               // walked, main_arena included
  // Thread arenas that could not be walked, and why: their heaps stay
  // roots, hashed as read.
  std::size_t other_arenas = 0;
  std::string not_walked;
};

// Walks glibc 2.36's (x86-64) arenas: finds main_arena in a writable data
// segment by its shape, walks [heap] from its start to the top chunk, then
// each thread arena on main_arena's list heap by heap, reads each arena's
// tcache and fastbin lists (safe-linked), finds the mmapped chunks. Fails
// with the reason when the image does not hold a main arena this walk
// understands; a thread arena it cannot walk is left as read (see
// other_arenas).
[[nodiscard]] Result<GlibcHeap> walk_glibc_heap(const ProcessImage &image);

} // namespace cmc::decoder
