#include "decoder/glibc_heap.h"

#include <algorithm>
#include <cstring>
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
    const auto &memory = image_.memory;
    auto found = std::upper_bound(
        memory.begin(), memory.end(), at,
        [](std::uint64_t a, const MemorySegment &s) { return a < s.address; });
    if (found == memory.begin())
      return std::nullopt;
    --found;
    if (at + 8 > found->address + found->bytes.size())
      return std::nullopt;
    return load(*found, at - found->address);
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
  std::vector<HeapChunk> chunks; // from the start of [heap] to top
  std::vector<bool> in_use;
};

// The chunks of [heap] from its start up to the top chunk; in use when the
// next chunk's PREV_INUSE is set (tcache and fastbin chunks keep it set).
Result<Walked> walk_to_top(const MemorySegment &heap, std::size_t index,
                           std::uint64_t top) {
  Walked walked;
  std::uint64_t at = heap.address;
  const auto end = heap.address + heap.bytes.size();
  if (top + 16 > end)
    return Error{fmt::format("the top chunk {:#x} is past [heap]", top)};
  while (at < top) {
    const auto size = load(heap, at - heap.address + 8) & ~kFlags;
    if (size < kMinChunk || size % 16 != 0 || at + size > top)
      return Error{
          fmt::format("the heap chunk at {:#x} has size {:#x}", at, size)};
    walked.chunks.push_back(HeapChunk{at, size, index, false});
    at += size;
  }
  if (at != top)
    return Error{fmt::format("the heap walk missed the top chunk {:#x}", top)};
  for (std::size_t i = 0; i < walked.chunks.size(); ++i) {
    const auto next = walked.chunks[i].address + walked.chunks[i].size;
    walked.in_use.push_back(
        (load(heap, next - heap.address + 8) & kPrevInUse) != 0);
  }
  return walked;
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

std::size_t count_other_arenas(const Memory &memory, std::uint64_t arena) {
  std::size_t others = 0;
  auto next = memory.word(arena + kNext).value_or(arena);
  while (next != arena && next != 0 && others < 1024) {
    ++others;
    next = memory.word(next + kNext).value_or(arena);
  }
  return others;
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
  const auto top = *memory.word(arena->address + kTop);
  auto walked = walk_to_top(*heap_at, heap_index, top);
  if (!walked)
    return walked.error();
  auto &chunks = walked->chunks;
  std::vector<std::uint64_t> listed;
  std::uint64_t key = 0;
  const bool has_tcache = !chunks.empty() &&
                          chunks.front().size == kTcacheChunkSize &&
                          walked->in_use.front();
  if (has_tcache) {
    const auto tcache_key =
        read_tcache(memory, chunks.front().user_begin(), listed);
    if (!tcache_key)
      return tcache_key.error();
    key = *tcache_key;
  }
  if (auto fast = read_fastbins(memory, arena->address, chunks.size(), listed);
      !fast)
    return fast.error();
  std::sort(listed.begin(), listed.end());

  GlibcHeap heap;
  heap.chunk_segments.assign(image.memory.size(), false);
  heap.chunk_segments[heap_index] = true;
  for (std::size_t i = has_tcache ? 1 : 0; i < chunks.size(); ++i) {
    if (walked->in_use[i] &&
        !std::binary_search(listed.begin(), listed.end(), chunks[i].address))
      heap.in_use.push_back(chunks[i]);
    else
      heap.free_list.push_back(chunks[i]);
  }
  for (std::size_t s = 0; s < image.memory.size(); ++s) {
    if (image.memory[s].kind != MemoryKind::kAnonymous)
      continue;
    const auto mapped = mmapped_chunks(image.memory[s], s);
    heap.in_use.insert(heap.in_use.end(), mapped.begin(), mapped.end());
    heap.chunk_segments[s] = !mapped.empty();
  }
  heap.free_chunks = heap.free_list.size();
  std::sort(heap.in_use.begin(), heap.in_use.end(),
            [](const auto &a, const auto &b) { return a.address < b.address; });
  heap.bookkeeping.push_back(
      Bookkeeping{arena->segment, arena->address, kArenaSize});
  find_tcache_key(image, key, *arena, heap);
  heap.other_arenas = count_other_arenas(memory, arena->address);
  return heap;
}

} // namespace cmc::decoder
