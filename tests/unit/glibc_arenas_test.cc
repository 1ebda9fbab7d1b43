// The canonical state of a threaded process, on images built by hand the
// way glibc 2.36 lays out a thread arena (arena.c's new_heap and
// _int_new_arena): heap_info at a 64 MiB-aligned address, the arena's
// malloc_state after it, the chunks after that, the thread's tcache the
// first of them.

#include <algorithm>
#include <bit>
#include <cstring>

#include <gtest/gtest.h>

#include "decoder/canonical_state.h"
#include "decoder/glibc_heap.h"

namespace cmc::decoder {
namespace {

// Where the kernel put what differs per run, and the run's ids.
struct Placement {
  std::uint64_t arena_heap = 0; // 64 MiB-aligned
  std::uint64_t thread_stack = 0;
  std::uint32_t main_tid = 0;
  std::uint64_t garbage = 0; // in the free chunks and the tcache key
  // The arena grew a second heap (64 MiB above the first), where node B's
  // next node is.
  bool two_heaps = false;
};

constexpr std::uint64_t kLibcData = 0x7ffff7f00000;
constexpr std::uint64_t kMainArena = kLibcData + 0x200;
constexpr std::uint64_t kBss = 0x555555557000;
constexpr std::uint64_t kHeap = 0x555555559000;
constexpr std::uint64_t kMainTls = 0x7ffff7d00000;
constexpr std::uint64_t kMainStack = 0x7ffffffde000;
constexpr std::uint64_t kTidInPthread = 0x2d0;
// Offsets in a thread arena's first heap.
constexpr std::uint64_t kArena = 0x30;
constexpr std::uint64_t kTcache = 0x8d0;
constexpr std::uint64_t kNodeA = 0xb60;
constexpr std::uint64_t kCached = 0xb90; // freed into the tcache
constexpr std::uint64_t kNodeB = 0xbc0;
constexpr std::uint64_t kUnsorted = 0xbf0; // freed into the unsorted bin
constexpr std::uint64_t kThreadTop = 0xc30;
constexpr std::uint64_t kThreadHeapSize = 0x2000;

class Builder {
public:
  MemorySegment &add(std::string name, MemoryKind kind, std::uint64_t address,
                     std::size_t size) {
    image_.memory.push_back({std::move(name), kind, address, {}});
    image_.memory.back().bytes.resize(size);
    return image_.memory.back();
  }
  void put(std::uint64_t at, std::uint64_t value) {
    for (auto &segment : image_.memory)
      if (at >= segment.address &&
          at + 8 <= segment.address + segment.bytes.size()) {
        std::memcpy(segment.bytes.data() + (at - segment.address), &value, 8);
        return;
      }
    FAIL() << "no segment holds " << at;
  }
  // An empty malloc_state at arena whose top chunk is top.
  void arena(std::uint64_t arena, std::uint64_t top, std::uint64_t next) {
    put(arena + 0x60, top);
    for (std::uint64_t i = 0; i < 127; ++i) {
      const auto self = arena + 0x70 + 16 * i - 16;
      put(arena + 0x70 + 16 * i, self);
      put(arena + 0x70 + 16 * i + 8, self);
    }
    put(arena + 0x870, next);
  }
  void chunk(std::uint64_t at, std::uint64_t size_field) {
    put(at + 8, size_field);
  }
  void thread(std::uint32_t id, std::uint64_t rsp, std::uint64_t fs_base) {
    ThreadImage thread;
    thread.id = id;
    thread.registers.rsp = rsp;
    thread.registers.fs_base = fs_base;
    put(fs_base + kTidInPthread, id);
    image_.threads.push_back(thread);
  }
  ProcessImage take() {
    std::sort(
        image_.memory.begin(), image_.memory.end(),
        [](const auto &a, const auto &b) { return a.address < b.address; });
    return std::move(image_);
  }
  ProcessImage image_;
};

// A main thread and a worker whose arena holds a list of two nodes, a
// chunk in its tcache and one in the unsorted bin.
void thread_arena(Builder &b, const Placement &p) {
  const auto t = p.arena_heap;
  b.add("anonymous 3", MemoryKind::kAnonymous, t, kThreadHeapSize);
  b.put(t, t + kArena); // heap_info: ar_ptr, prev, size, mprotect_size
  b.put(t + 16, kThreadHeapSize);
  b.put(t + 24, kThreadHeapSize);
  b.arena(t + kArena, t + kThreadTop, kMainArena);
  b.chunk(t + kTcache, 0x291);
  b.put(t + kTcache + 16, std::uint64_t{1} << 16); // one 48-byte chunk
  b.put(t + kTcache + 16 + 0x80 + 8, t + kCached + 16);
  b.chunk(t + kNodeA, 0x31);
  b.put(t + kNodeA + 16, 0x41);
  b.put(t + kNodeA + 24, t + kNodeB + 16);
  b.put(t + kNodeA + 32, t + kCached + 16); // dangling
  b.chunk(t + kCached, 0x31);
  b.put(t + kCached + 16, (t + kCached + 16) >> 12); // safe-linked null
  b.put(t + kCached + 24, p.garbage);                // tcache_key
  b.chunk(t + kNodeB, 0x31);
  b.put(t + kNodeB + 16, 0x42);
  b.chunk(t + kUnsorted, 0x41);
  b.put(t + kUnsorted + 16, p.garbage);
  b.put(t + kUnsorted + 24, p.garbage ^ 0xff);
  b.put(t + kThreadTop, 0x40); // prev_size: the free chunk before
  if (!p.two_heaps) {
    b.chunk(t + kThreadTop, kThreadHeapSize - kThreadTop);
    return;
  }
  // sysmalloc freed the old top less two fenceposts: 16 bytes, then 0.
  b.chunk(t + kThreadTop, kThreadHeapSize - kThreadTop - 32);
  b.chunk(t + kThreadHeapSize - 32, 16);
  b.chunk(t + kThreadHeapSize - 16, 1);
  const auto second = t + (std::uint64_t{64} << 20);
  b.add("anonymous 4", MemoryKind::kAnonymous, second, 0x1000);
  b.put(second, t + kArena);
  b.put(second + 8, t);
  b.put(second + 16, 0x1000);
  b.put(second + 24, 0x1000);
  b.chunk(second + 0x30, 0x31);
  b.put(second + 0x40, 0x43);
  b.chunk(second + 0x60, (0x1000 - 0x60) | 1);
  b.put(t + kArena + 0x60, second + 0x60);
  b.put(t + kNodeB + 24, second + 0x40);
}

ProcessImage threaded_image(const Placement &p) {
  Builder b;
  b.add(".bss of prog", MemoryKind::kData, kBss, 0x100);
  b.add("[heap]", MemoryKind::kHeap, kHeap, 0x1000);
  b.add("anonymous 1", MemoryKind::kAnonymous, kMainTls, 0x1000);
  b.add(".data of libc.so.6", MemoryKind::kData, kLibcData, 0x1000);
  b.add("stack of thread 1", MemoryKind::kStack, kMainStack, 0x1000);
  b.add("stack of thread 2", MemoryKind::kStack, p.thread_stack, 0x1000);
  b.image_.mapped.push_back(
      {"libc.so.6 r-x at 0x0", 0x7ffff7c00000, 0x7ffff7c80000});
  b.arena(kMainArena, kHeap + 0x290, p.arena_heap + kArena);
  b.put(kLibcData + 0x10, p.garbage); // tcache_key
  b.chunk(kHeap, 0x291);
  b.chunk(kHeap + 0x290, (0x1000 - 0x290) | 1);
  thread_arena(b, p);
  const auto s = p.thread_stack;
  b.put(kBss, s + 0x10); // a pointer into the worker's stack
  b.put(s + 0x10, p.arena_heap + kNodeA + 16);
  b.put(s + 0x18, p.arena_heap + kArena);       // thread_arena
  b.put(s + 0x20, p.arena_heap + kTcache + 16); // tcache
  // The worker's stack below its live part, named from its end.
  b.image_.mapped.push_back(
      {"stack of thread 2 below its pointer", s - 0x8000, s, true});
  b.put(kBss + 8, s - 0x100);
  // glibc's pointer guard, and a pointer stored mangled (PTR_MANGLE: a
  // setjmp buffer): rol(p ^ guard, 17).
  constexpr std::uint64_t kGuard = 0x5eed5eed12345678;
  b.put(kMainTls + 0x100 + 0x30, kGuard);
  b.put(s + 0x28, std::rotl((p.arena_heap + kNodeB + 16) ^ kGuard, 17));
  b.thread(p.main_tid, kMainStack + 128, kMainTls + 0x100);
  b.thread(p.main_tid + 1, s + 128, s + 0x800);
  return b.take();
}

CanonicalState canonical(const ProcessImage &image) {
  CanonicalOptions options;
  options.keep_bytes = true;
  return canonicalize(image, options);
}

// The worker's arena and stack in the other order in the address space.
const Placement kFirst{0x7fffe8000000, 0x7fffe7000000, 100, 0x1111};
const Placement kMoved{0x7fffd4000000, 0x7fffe0000000, 200, 0x2222};

TEST(GlibcArenas, AThreadArenaIsWalkedLikeMainArena) {
  const auto image = threaded_image(kFirst);
  const auto heap = walk_glibc_heap(image);
  ASSERT_TRUE(heap.ok()) << heap.error().message;
  EXPECT_EQ(heap->arenas, 2U);
  EXPECT_EQ(heap->other_arenas, 0U);
  ASSERT_EQ(heap->arena_heaps.size(), 1U);
  EXPECT_EQ(image.memory[heap->arena_heaps[0].segment].address,
            kFirst.arena_heap);
  ASSERT_EQ(heap->in_use.size(), 2U);
  EXPECT_EQ(heap->in_use[0].address, kFirst.arena_heap + kNodeA);
  EXPECT_EQ(heap->in_use[1].address, kFirst.arena_heap + kNodeB);
  EXPECT_EQ(heap->free_chunks, 2U);
  const auto state = canonical(image);
  EXPECT_EQ(state.heap.allocator, "glibc");
  EXPECT_EQ(state.heap.arenas, 2U);
  EXPECT_EQ(state.heap.chunks, 2U);
  EXPECT_EQ(state.heap.free_chunks, 2U);
}

TEST(GlibcArenas, AThreadedHeapElsewhereHashesAlike) {
  const auto first = canonical(threaded_image(kFirst));
  const auto moved = canonical(threaded_image(kMoved));
  EXPECT_EQ(first.fingerprint, moved.fingerprint)
      << differences(first, moved).front().describe();
  CanonicalOptions raw;
  raw.heap = HeapModel::kRaw;
  EXPECT_NE(canonicalize(threaded_image(kFirst), raw).fingerprint,
            canonicalize(threaded_image(kMoved), raw).fingerprint);
  const auto names = std::any_of(
      first.pieces.begin(), first.pieces.end(),
      [](const StatePiece &p) { return p.name == "heap of arena 1"; });
  EXPECT_FALSE(names) << "an arena heap is no root";
}

TEST(GlibcArenas, AnArenaOfTwoHeapsIsWalkedHeapByHeap) {
  auto first = kFirst;
  auto moved = kMoved;
  first.two_heaps = moved.two_heaps = true;
  const auto image = threaded_image(first);
  const auto heap = walk_glibc_heap(image);
  ASSERT_TRUE(heap.ok()) << heap.error().message;
  EXPECT_EQ(heap->other_arenas, 0U) << heap->not_walked;
  ASSERT_EQ(heap->arena_heaps.size(), 2U);
  EXPECT_EQ(heap->arena_heaps[1].heap, 2U);
  EXPECT_EQ(heap->in_use.size(), 3U);
  EXPECT_EQ(heap->free_chunks, 3U); // the old top too
  const auto a = canonical(image);
  const auto b = canonical(threaded_image(moved));
  EXPECT_EQ(a.heap.chunks, 3U);
  EXPECT_EQ(a.fingerprint, b.fingerprint)
      << differences(a, b).front().describe();
  EXPECT_NE(a.fingerprint, canonical(threaded_image(kFirst)).fingerprint);
}

TEST(GlibcArenas, AChangedByteOfAThreadArenaChunkIsNamed) {
  const auto first = canonical(threaded_image(kFirst));
  auto image = threaded_image(kMoved);
  const auto at = kMoved.arena_heap + kNodeB + 16;
  for (auto &segment : image.memory)
    if (at >= segment.address && at < segment.address + segment.bytes.size())
      segment.bytes[at - segment.address + 2] = std::byte{0x7f};
  const auto changed = canonical(image);
  ASSERT_NE(first.fingerprint, changed.fingerprint);
  const auto where = differences(first, changed);
  ASSERT_EQ(where.size(), 1U) << where.back().describe();
  // The worker's stack reaches node A (1), node A node B (2).
  EXPECT_EQ(where.front().describe(), "heap chunk 2 (40 B)+2");
}

TEST(GlibcArenas, AFreedChunkOfAThreadArenaIsNoState) {
  const auto first = canonical(threaded_image(kFirst));
  auto image = threaded_image(kFirst);
  const auto segment =
      std::find_if(image.memory.begin(), image.memory.end(), [](const auto &s) {
        return s.address == kFirst.arena_heap;
      });
  ASSERT_NE(segment, image.memory.end());
  for (const auto chunk : {kCached, kUnsorted})
    std::fill_n(segment->bytes.begin() + static_cast<long>(chunk + 32), 16,
                std::byte{0x5a});
  EXPECT_EQ(first.fingerprint, canonical(image).fingerprint);
}

TEST(GlibcArenas, AThreadArenaThatCannotBeWalkedIsHashedAsReadAndSaysWhy) {
  auto image = threaded_image(kFirst);
  const auto segment =
      std::find_if(image.memory.begin(), image.memory.end(), [](const auto &s) {
        return s.address == kFirst.arena_heap;
      });
  ASSERT_NE(segment, image.memory.end());
  // The chunk after the tcache with a size that runs past the top.
  const std::uint64_t size = 0x10000;
  std::memcpy(segment->bytes.data() + kNodeA + 8, &size, 8);
  const auto state = canonical(image);
  EXPECT_TRUE(state.heap.canonical);
  EXPECT_EQ(state.heap.arenas, 1U);
  EXPECT_EQ(state.heap.allocator,
            "glibc (1 thread arena hashed as read: arena 1 at "
            "0x7fffe8000030: the heap chunk at 0x7fffe8000b60 has size "
            "0x10000)");
  EXPECT_TRUE(
      std::any_of(state.pieces.begin(), state.pieces.end(),
                  [](const StatePiece &p) { return p.name == "anonymous 2"; }));
}

} // namespace
} // namespace cmc::decoder
