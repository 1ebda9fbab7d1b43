#include "decoder/glibc_heap.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

#include <fmt/format.h>

namespace cmc::decoder {

namespace {

// struct malloc_state of glibc 2.36 on x86-64 (malloc/malloc.c): mutex,
// flags, have_fastchunks, then fastbinsY[NFASTBINS = 10], top,
// last_remainder, bins[NBINS * 2 - 2 = 254], binmap[4], next, next_free,
// attached_threads, system_mem, max_system_mem.
constexpr std::uint64_t kFastbins = 0x10;
constexpr std::uint64_t kFastbinCount = 10;
constexpr std::uint64_t kTop = 0x60;
constexpr std::uint64_t kBins = 0x70;
constexpr std::uint64_t kBinPairs = 127;
constexpr std::uint64_t kNext = 0x870;
constexpr std::uint64_t kArenaSize = 0x898;
// struct heap_info (arena.c): ar_ptr, prev, size, mprotect_size, pagesize,
// padded to 48 bytes; each heap is HEAP_MAX_SIZE (64 MiB) aligned.
constexpr std::uint64_t kHeapPrev = 8;
constexpr std::uint64_t kHeapSize = 16;
constexpr std::uint64_t kHeapMprotectSize = 24;
constexpr std::uint64_t kHeapInfoSize = 0x30;
constexpr std::uint64_t kHeapMax = std::uint64_t{64} << 20;
// A bound on the arena list and on an arena's heaps, against a cycle.
constexpr std::size_t kMaxArenas = 1024;
// struct tcache_perthread_struct: uint16_t counts[64], then
// tcache_entry *entries[64]; malloc'd first, so the first chunk of [heap].
constexpr std::uint64_t kTcacheBins = 64;
constexpr std::uint64_t kTcacheEntries = 128;
constexpr std::uint64_t kTcacheChunkSize = 0x290;
// The flags in a chunk's size field.
constexpr std::uint64_t kPrevInUse = 1;
constexpr std::uint64_t kIsMmapped = 2;
constexpr std::uint64_t kFlags = 7;
constexpr std::uint64_t kMinChunk = 32;
constexpr std::uint64_t kPage = 4096;

std::uint64_t load(const MemorySegment &segment, std::uint64_t offset) {
  std::uint64_t value = 0;
  std::memcpy(&value, segment.bytes.data() + offset, sizeof(value));
  return value;
}

// Words of the image by target address.
class Memory {
public:
  explicit Memory(const ProcessImage &image) : image_(image) {}

  [[nodiscard]] std::optional<std::uint64_t> word(std::uint64_t at) const {
    return word_at(image_, at);
  }

  // The index of the segment holding at, if any.
  [[nodiscard]] std::optional<std::size_t> segment_at(std::uint64_t at) const {
    const auto &memory = image_.memory;
    auto found = std::upper_bound(
        memory.begin(), memory.end(), at,
        [](std::uint64_t a, const MemorySegment &s) { return a < s.address; });
    if (found == memory.begin() ||
        at >= std::prev(found)->address + std::prev(found)->bytes.size())
      return std::nullopt;
    return static_cast<std::size_t>(std::prev(found) - memory.begin());
  }

private:
  const ProcessImage &image_;
};

// A glibc malloc_state at offset of segment, recognised by its shape: the
// top chunk in [heap], each bin empty (pointing at itself less 16) or
// holding [heap] chunks, each fastbin empty or in [heap], next set.
bool looks_like_arena(const MemorySegment &segment, std::uint64_t offset,
                      const MemorySegment &heap) {
  const auto in_heap = [&](std::uint64_t a) {
    return a - heap.address < heap.bytes.size() && a % 16 == 0;
  };
  if (!in_heap(load(segment, offset + kTop)) ||
      load(segment, offset + kNext) == 0)
    return false;
  for (std::uint64_t i = 0; i < kFastbinCount; ++i) {
    const auto head = load(segment, offset + kFastbins + 8 * i);
    if (head != 0 && !in_heap(head))
      return false;
  }
  for (std::uint64_t i = 0; i < kBinPairs; ++i) {
    const auto fd = load(segment, offset + kBins + 16 * i);
    const auto bk = load(segment, offset + kBins + 16 * i + 8);
    const auto self = segment.address + offset + kBins + 16 * i - 16;
    if (!(fd == self && bk == self) && !(in_heap(fd) && in_heap(bk)))
      return false;
  }
  return true;
}

struct ArenaAt {
  std::size_t segment = 0;
  std::uint64_t address = 0;
};

Result<ArenaAt> find_main_arena(const ProcessImage &image,
                                const MemorySegment &heap) {
  for (std::size_t s = 0; s < image.memory.size(); ++s) {
    const auto &segment = image.memory[s];
    if (segment.kind != MemoryKind::kData || segment.bytes.size() < kArenaSize)
      continue;
    for (std::uint64_t offset = 0; offset + kArenaSize <= segment.bytes.size();
         offset += 8)
      if (looks_like_arena(segment, offset, heap))
        return ArenaAt{s, segment.address + offset};
  }
  return Error{"no glibc malloc arena found in the data segments"};
}

struct Walked {
  std::vector<HeapChunk> chunks; // of every heap walked, heap by heap
  std::vector<bool> in_use;
};

// The chunks of segment from `from` up to the top chunk at end or, in an
// older heap of a thread arena (fenced), up to the fencepost sysmalloc
// left at end of it when the top moved to a new heap: a header of size 0,
// after a 16-byte chunk when there was room. A chunk is in use when the
// next chunk's PREV_INUSE is set (tcache and fastbin chunks keep it set).
Result<void> walk_chunks(const MemorySegment &segment, std::size_t index,
                         std::uint64_t from, std::uint64_t end, bool fenced,
                         Walked &walked) {
  // The top chunk's header is read: it lies before the segment's end.
  if (from < segment.address ||
      end + (fenced ? 0 : 16) > segment.address + segment.bytes.size())
    return Error{fmt::format("the heap's end {:#x} is past its mapping", end)};
  std::uint64_t at = from;
  while (at < end) {
    const auto size = load(segment, at - segment.address + 8) & ~kFlags;
    if (fenced && size == 0)
      return {};
    if (fenced && size == 16) {
      at += size;
      continue;
    }
    if (size < kMinChunk || size % 16 != 0 ||
        at + size + (fenced ? 16 : 0) > end)
      return Error{
          fmt::format("the heap chunk at {:#x} has size {:#x}", at, size)};
    const auto next = load(segment, at + size - segment.address + 8);
    walked.chunks.push_back(HeapChunk{at, size, index, false});
    walked.in_use.push_back((next & kPrevInUse) != 0);
    at += size;
  }
  if (fenced || at != end)
    return Error{fmt::format("the heap walk missed the end {:#x}", end)};
  return {};
}

// The chunks on the tcache lists (entries point at user data; each next
// is safe-linked: stored ^ (its own address >> 12)), and tcache_key as the
// first entry's key field holds it (0 when the tcache is empty).
Result<std::uint64_t> read_tcache(const Memory &memory, std::uint64_t tcache,
                                  std::vector<std::uint64_t> &listed) {
  std::uint64_t key = 0;
  for (std::uint64_t bin = 0; bin < kTcacheBins; ++bin) {
    const auto counts = memory.word(tcache + bin / 4 * 8);
    const auto head = memory.word(tcache + kTcacheEntries + bin * 8);
    if (!counts || !head)
      return Error{"the tcache is outside the image"};
    const auto count = *counts >> (bin % 4 * 16) & 0xffff;
    auto entry = *head;
    for (std::uint64_t n = 0; n < count && entry != 0; ++n) {
      const auto next = memory.word(entry);
      const auto entry_key = memory.word(entry + 8);
      if (!next || !entry_key || entry % 16 != 0)
        return Error{fmt::format("tcache entry {:#x} is not a chunk", entry)};
      listed.push_back(entry - 16);
      if (key == 0)
        key = *entry_key;
      entry = *next ^ (entry >> 12);
    }
  }
  return key;
}

// The chunks on the fastbin lists: heads are chunk addresses, each fd is
// safe-linked like a tcache entry's next.
Result<void> read_fastbins(const Memory &memory, std::uint64_t arena,
                           std::size_t limit,
                           std::vector<std::uint64_t> &listed) {
  for (std::uint64_t bin = 0; bin < kFastbinCount; ++bin) {
    auto chunk = memory.word(arena + kFastbins + bin * 8).value_or(0);
    for (std::size_t n = 0; chunk != 0; ++n) {
      const auto fd = memory.word(chunk + 16);
      if (!fd || n > limit || chunk % 16 != 0)
        return Error{fmt::format("fastbin chunk {:#x} is not a chunk", chunk)};
      listed.push_back(chunk);
      chunk = *fd ^ ((chunk + 16) >> 12);
    }
  }
  return {};
}

// An anonymous segment that is one or more mmapped chunks end to end
// (the kernel merges adjacent anonymous mappings): their headers have
// prev_size 0 (no alignment gap on x86-64) and IS_MMAPPED alone.
std::vector<HeapChunk> mmapped_chunks(const MemorySegment &segment,
                                      std::size_t index) {
  std::vector<HeapChunk> chunks;
  const auto size = segment.bytes.size();
  std::uint64_t offset = 0;
  while (offset + 16 <= size) {
    const auto field = load(segment, offset + 8);
    const auto chunk = field & ~kFlags;
    if (load(segment, offset) != 0 || (field & kFlags) != kIsMmapped ||
        chunk == 0 || chunk % kPage != 0 || offset + chunk > size)
      return {};
    chunks.push_back(HeapChunk{segment.address + offset, chunk, index, true});
    offset += chunk;
  }
  return offset == size ? chunks : std::vector<HeapChunk>{};
}

// tcache_key (random per run, malloc's double-free check) where libc keeps
// it: a data word equal to the key seen in a tcache entry.
void find_tcache_key(const ProcessImage &image, std::uint64_t key,
                     const ArenaAt &arena, GlibcHeap &heap) {
  if (key == 0)
    return;
  for (std::size_t s = 0; s < image.memory.size(); ++s) {
    const auto &segment = image.memory[s];
    if (segment.kind != MemoryKind::kData)
      continue;
    for (std::uint64_t offset = 0; offset + 8 <= segment.bytes.size();
         offset += 8) {
      const auto at = segment.address + offset;
      if (load(segment, offset) == key &&
          (at < arena.address || at >= arena.address + kArenaSize))
        heap.bookkeeping.push_back(Bookkeeping{s, at, 8});
    }
  }
}

// What an arena's lists hold: chunks that are free though their next
// chunk's PREV_INUSE is set, and the tcache_perthread_structs (malloc's).
struct Listed {
  std::vector<std::uint64_t> chunks;
  std::vector<std::uint64_t> tcaches;
  std::uint64_t key = 0; // tcache_key, 0 while no tcache entry was seen
};

// The lists of the arena whose chunks are walked.chunks[first...]. Its
// tcache is its first chunk when that is an in-use chunk of
// tcache_perthread_struct's size: the first malloc of the thread that made
// the arena (the main thread for main_arena) allocated it there.
Result<void> read_lists(const Memory &memory, const Walked &walked,
                        std::size_t first, std::uint64_t arena,
                        Listed &listed) {
  const auto &chunks = walked.chunks;
  if (first < chunks.size() && chunks[first].size == kTcacheChunkSize &&
      walked.in_use[first]) {
    const auto key =
        read_tcache(memory, chunks[first].user_begin(), listed.chunks);
    if (!key)
      return key.error();
    listed.tcaches.push_back(chunks[first].address);
    if (listed.key == 0)
      listed.key = *key;
  }
  return read_fastbins(memory, arena, chunks.size(), listed.chunks);
}

// One thread arena as walked.
struct ArenaWalk {
  Walked walked;
  Listed listed;
  std::vector<ArenaHeap> heaps;
};

// The heaps of the thread arena at arena, its first heap first: the one
// holding its top chunk (heap_for_ptr: the top's address rounded down to
// 64 MiB, where heap_info is), then each heap_info's prev.
Result<std::vector<std::uint64_t>> heap_chain(const Memory &memory,
                                              std::uint64_t arena) {
  const auto top = memory.word(arena + kTop);
  if (!top)
    return Error{"its malloc_state is outside the image"};
  std::vector<std::uint64_t> heaps;
  for (auto at = *top & ~(kHeapMax - 1); at != 0;
       at = memory.word(at + kHeapPrev).value_or(0)) {
    if (memory.word(at) != arena || heaps.size() >= kMaxArenas)
      return Error{fmt::format("the heap at {:#x} is not its own", at)};
    heaps.push_back(at);
  }
  std::reverse(heaps.begin(), heaps.end());
  if (heaps.empty() || heaps.front() + kHeapInfoSize != arena)
    return Error{"its first heap does not hold its malloc_state"};
  return heaps;
}

// Walks the thread arena at arena, number on main_arena's list. A heap's
// read-write part (mprotect_size) is one mapping the image holds as one
// segment; its first chunk follows heap_info (and, in the arena's first
// heap, malloc_state), aligned as _int_new_arena aligns it.
Result<ArenaWalk> walk_thread_arena(const ProcessImage &image,
                                    const Memory &memory, std::uint64_t arena,
                                    std::size_t number) {
  auto heaps = heap_chain(memory, arena);
  if (!heaps)
    return heaps.error();
  ArenaWalk walk;
  for (std::size_t k = 0; k < heaps->size(); ++k) {
    const auto at = (*heaps)[k];
    const auto index = memory.segment_at(at);
    const auto rw = memory.word(at + kHeapMprotectSize);
    const auto used = memory.word(at + kHeapSize);
    if (!index || !rw || !used || image.memory[*index].address != at ||
        image.memory[*index].kind != MemoryKind::kAnonymous ||
        image.memory[*index].bytes.size() != *rw)
      return Error{fmt::format("its heap at {:#x} is not one mapping", at)};
    const bool current = k + 1 == heaps->size();
    const auto from = k == 0 ? (arena + kArenaSize + 15) & ~std::uint64_t{15}
                             : at + kHeapInfoSize;
    const auto end = current ? *memory.word(arena + kTop) : at + *used;
    if (auto walked = walk_chunks(image.memory[*index], *index, from, end,
                                  !current, walk.walked);
        !walked)
      return walked.error();
    walk.heaps.push_back(ArenaHeap{*index, number, k + 1, heaps->size()});
  }
  if (auto lists = read_lists(memory, walk.walked, 0, arena, walk.listed);
      !lists)
    return lists.error();
  return walk;
}

template <typename T>
void append_to(std::vector<T> &to, const std::vector<T> &from) {
  to.insert(to.end(), from.begin(), from.end());
}

void append(ArenaWalk &all, const ArenaWalk &one) {
  append_to(all.walked.chunks, one.walked.chunks);
  append_to(all.walked.in_use, one.walked.in_use);
  append_to(all.listed.chunks, one.listed.chunks);
  append_to(all.listed.tcaches, one.listed.tcaches);
  append_to(all.heaps, one.heaps);
  if (all.listed.key == 0)
    all.listed.key = one.listed.key;
}

// The thread arenas on main_arena's list (newest first: _int_new_arena
// links each new one right after main_arena), each walked into all; one
// that cannot be walked is counted and left as read.
void walk_thread_arenas(const ProcessImage &image, const Memory &memory,
                        std::uint64_t main, ArenaWalk &all, GlibcHeap &heap) {
  auto next = memory.word(main + kNext).value_or(main);
  for (std::size_t number = 1;
       next != main && next != 0 && number <= kMaxArenas; ++number) {
    if (auto walk = walk_thread_arena(image, memory, next, number)) {
      append(all, *walk);
      ++heap.arenas;
    } else {
      ++heap.other_arenas;
      if (heap.not_walked.empty())
        heap.not_walked = fmt::format("arena {} at {:#x}: {}", number, next,
                                      walk.error().message);
    }
    next = memory.word(next + kNext).value_or(main);
  }
}

// Each walked chunk in use or free; the tcaches are malloc's own.
void classify(ArenaWalk &all, GlibcHeap &heap) {
  auto &listed = all.listed.chunks;
  std::sort(listed.begin(), listed.end());
  const auto &tcaches = all.listed.tcaches;
  const auto &chunks = all.walked.chunks;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const auto at = chunks[i].address;
    if (std::find(tcaches.begin(), tcaches.end(), at) != tcaches.end())
      continue;
    if (all.walked.in_use[i] &&
        !std::binary_search(listed.begin(), listed.end(), at))
      heap.in_use.push_back(chunks[i]);
    else
      heap.free_list.push_back(chunks[i]);
  }
}

void mark_chunk_segments(const ProcessImage &image, std::size_t heap_index,
                         GlibcHeap &heap) {
  heap.chunk_segments.assign(image.memory.size(), false);
  heap.chunk_segments[heap_index] = true;
  for (std::size_t s = 0; s < image.memory.size(); ++s) {
    if (image.memory[s].kind != MemoryKind::kAnonymous)
      continue;
    const auto mapped = mmapped_chunks(image.memory[s], s);
    heap.in_use.insert(heap.in_use.end(), mapped.begin(), mapped.end());
    heap.chunk_segments[s] = !mapped.empty();
  }
  for (const auto &arena_heap : heap.arena_heaps)
    heap.chunk_segments[arena_heap.segment] = true;
  const auto by_address = [](const auto &a, const auto &b) {
    return a.address < b.address;
  };
  std::sort(heap.in_use.begin(), heap.in_use.end(), by_address);
  std::sort(heap.free_list.begin(), heap.free_list.end(), by_address);
}

} // namespace

Result<GlibcHeap> walk_glibc_heap(const ProcessImage &image) {
  const auto heap_at =
      std::find_if(image.memory.begin(), image.memory.end(),
                   [](const auto &s) { return s.kind == MemoryKind::kHeap; });
  if (heap_at == image.memory.end())
    return Error{"no [heap] mapping"};
  const auto heap_index =
      static_cast<std::size_t>(heap_at - image.memory.begin());
  const auto arena = find_main_arena(image, *heap_at);
  if (!arena)
    return arena.error();
  const Memory memory(image);
  ArenaWalk all;
  const auto top = *memory.word(arena->address + kTop);
  if (auto walked = walk_chunks(*heap_at, heap_index, heap_at->address, top,
                                false, all.walked);
      !walked)
    return walked.error();
  if (auto lists =
          read_lists(memory, all.walked, 0, arena->address, all.listed);
      !lists)
    return lists.error();
  GlibcHeap heap;
  walk_thread_arenas(image, memory, arena->address, all, heap);
  classify(all, heap);
  heap.arena_heaps = std::move(all.heaps);
  mark_chunk_segments(image, heap_index, heap);
  heap.free_chunks = heap.free_list.size();
  heap.bookkeeping.push_back(
      Bookkeeping{arena->segment, arena->address, kArenaSize});
  find_tcache_key(image, all.listed.key, *arena, heap);
  return heap;
}

} // namespace cmc::decoder
