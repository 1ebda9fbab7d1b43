#include "decoder/glibc_heap.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "decoder/canonical_state.h"

namespace cmc::decoder {
namespace {

// What the fixture heap_image wrote: the image and the addresses of some
// of its globals.
struct Recorded {
  ProcessImage image;
  std::map<std::string, std::uint64_t> marks;
  std::uint64_t fs_base = 0; // the thread's control block
};

MemoryKind kind_named(const std::string &kind) {
  if (kind == "heap")
    return MemoryKind::kHeap;
  if (kind == "data")
    return MemoryKind::kData;
  return MemoryKind::kAnonymous;
}

Recorded read_image(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  Recorded recorded;
  std::size_t at = 0;
  for (;;) {
    const auto eol = text.find('\n', at);
    if (eol == std::string::npos)
      throw std::runtime_error("truncated image " + path.string());
    std::istringstream line(text.substr(at, eol - at));
    at = eol + 1;
    std::string word;
    line >> word;
    if (word == "end")
      break;
    if (word == "pid") {
      line >> recorded.image.pid >> std::hex >> recorded.fs_base;
    } else if (word == "mark") {
      std::string name;
      line >> name >> std::hex >> recorded.marks[name];
    } else if (word == "mapped") {
      MappedRange range;
      line >> std::hex >> range.start >> range.end;
      std::getline(line, range.name);
      recorded.image.mapped.push_back(range);
    } else if (word == "segment") {
      MemorySegment segment;
      std::string kind;
      std::size_t size = 0;
      line >> kind >> std::hex >> segment.address >> size;
      std::getline(line >> std::ws, segment.name);
      segment.kind = kind_named(kind);
      segment.bytes.resize(size);
      std::memcpy(segment.bytes.data(), text.data() + at, size);
      at += size;
      recorded.image.memory.push_back(std::move(segment));
    }
  }
  ThreadImage thread;
  thread.id = recorded.image.pid;
  thread.registers.fs_base = recorded.fs_base;
  recorded.image.threads.push_back(thread);
  return recorded;
}

class GlibcHeapTest : public testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ =
        new std::filesystem::path(std::filesystem::temp_directory_path() /
                                  fmt::format("cmc_heap_images_{}", getpid()));
    std::filesystem::create_directories(*dir_);
    const auto command =
        fmt::format("{}/heap_image {}", CMC_FIXTURE_DIR, dir_->string());
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static Recorded image(const std::string &variant) {
    return read_image(*dir_ / (variant + ".img"));
  }
  static CanonicalState canonical(const Recorded &recorded,
                                  HeapModel model = HeapModel::kCanonical) {
    CanonicalOptions options;
    options.heap = model;
    options.keep_bytes = true;
    return canonicalize(recorded.image, options);
  }
  static std::filesystem::path *dir_;
};

std::filesystem::path *GlibcHeapTest::dir_ = nullptr;

TEST_F(GlibcHeapTest, TheWalkFindsTheArenaTheTcacheAndTheFastbins) {
  const auto a = image("a");
  const auto heap = walk_glibc_heap(a.image);
  ASSERT_TRUE(heap.ok()) << heap.error().message;
  // 5 freed 100-byte chunks, 8 freed 24-byte ones (7 tcache, 1 fastbin).
  EXPECT_GE(heap->free_chunks, 13U);
  EXPECT_TRUE(std::any_of(
      heap->in_use.begin(), heap->in_use.end(),
      [](const HeapChunk &c) { return c.mmapped && c.size >= 300000; }));
  const auto state = canonical(a);
  EXPECT_TRUE(state.heap.canonical) << state.heap.allocator;
  EXPECT_EQ(state.heap.allocator, "glibc");
  // 3 nodes, the blob, the big chunk at least; the 200-byte chunk is
  // garbage.
  EXPECT_GE(state.heap.chunks, 5U);
  EXPECT_GE(state.heap.garbage_chunks, 1U);
  EXPECT_GE(state.heap.garbage_bytes, 208U);
  EXPECT_EQ(state.heap.free_chunks, heap->free_chunks);
}

TEST_F(GlibcHeapTest, TwoAllocationOrdersOfOneListHashAlike) {
  const auto a = image("a");
  const auto b = image("b");
  ASSERT_NE(a.marks.at("list"), 0U);
  const auto canonical_a = canonical(a);
  const auto canonical_b = canonical(b);
  ASSERT_TRUE(canonical_a.heap.canonical);
  EXPECT_EQ(canonical_a.fingerprint, canonical_b.fingerprint)
      << differences(canonical_a, canonical_b).front().describe();
  EXPECT_NE(canonical(a, HeapModel::kRaw).fingerprint,
            canonical(b, HeapModel::kRaw).fingerprint);
}

TEST_F(GlibcHeapTest, AChangedByteInAReachableChunkIsNamed) {
  const auto a = canonical(image("a"));
  const auto changed = canonical(image("changed"));
  ASSERT_NE(a.fingerprint, changed.fingerprint);
  const auto where = differences(a, changed);
  ASSERT_EQ(where.size(), 1U) << where.back().describe();
  // The fixture's globals are the first roots: big (chunk 1), two
  // dangling pointers, interior (the blob, 2), list (its head, 3); the walk
  // then reaches the second node from the head.
  EXPECT_EQ(where.front().describe(), "heap chunk 4 (56 B)+21");
}

TEST_F(GlibcHeapTest, FreeChunksAndGarbageAreNoState) {
  const auto a = canonical(image("a"));
  const auto scribbled = canonical(image("scribbled"));
  const auto leaked = canonical(image("leaked"));
  EXPECT_EQ(a.fingerprint, scribbled.fingerprint)
      << differences(a, scribbled).front().describe();
  EXPECT_EQ(a.fingerprint, leaked.fingerprint);
  EXPECT_EQ(leaked.heap.garbage_chunks, a.heap.garbage_chunks + 1);
  EXPECT_EQ(leaked.heap.garbage_bytes, a.heap.garbage_bytes + 80);
  EXPECT_NE(canonical(image("a"), HeapModel::kRaw).fingerprint,
            canonical(image("scribbled"), HeapModel::kRaw).fingerprint);
}

TEST_F(GlibcHeapTest, APointerIntoTheMiddleOfAChunkIsChunkAndOffset) {
  const auto a = image("a");
  const auto state = canonical(a);
  const auto at = a.marks.at("interior");
  const auto segment = std::find_if(
      a.image.memory.begin(), a.image.memory.end(), [&](const auto &s) {
        return at >= s.address && at < s.address + s.bytes.size();
      });
  ASSERT_NE(segment, a.image.memory.end());
  const auto piece =
      std::find_if(state.pieces.begin(), state.pieces.end(),
                   [&](const auto &p) { return p.name == segment->name; });
  ASSERT_NE(piece, state.pieces.end());
  const auto offset = at - segment->address;
  std::uint64_t token = 0;
  std::memcpy(&token, state.bytes.data() + piece->offset + offset, 8);
  EXPECT_EQ(token & ((std::uint64_t{1} << 40) - 1), 24U);
  const auto number = token >> 40;
  EXPECT_GE(number, 1U);
  EXPECT_LE(number, state.heap.chunks);
  const auto name = fmt::format("heap chunk {} (40 B)", number);
  EXPECT_TRUE(std::any_of(state.pieces.begin(), state.pieces.end(),
                          [&](const auto &p) { return p.name == name; }))
      << name;
}

TEST_F(GlibcHeapTest, AnImageWithoutAGlibcArenaIsHashedRawAndSaysWhy) {
  auto a = image("a");
  for (auto &segment : a.image.memory)
    if (segment.kind == MemoryKind::kData)
      std::fill(segment.bytes.begin(), segment.bytes.end(), std::byte{0});
  const auto state = canonical(a);
  EXPECT_FALSE(state.heap.canonical);
  EXPECT_EQ(state.heap.allocator,
            "raw bytes (no glibc malloc arena found in the data segments)");
}

// The cost is printed once (ns per KB of image); the scratch buffer reused
// between calls must not leak one state into the next.
TEST_F(GlibcHeapTest, RepeatedCanonicalisationIsStable) {
  const auto a = image("a");
  const auto b = image("b");
  CanonicalOptions options;
  const auto expected = canonicalize(a.image, options).fingerprint;
  std::size_t bytes = 0;
  constexpr int kRounds = 50;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRounds; ++i) {
    const auto state = canonicalize(i % 2 == 0 ? a.image : b.image, options);
    ASSERT_EQ(state.fingerprint, expected);
    bytes = state.bytes_hashed;
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::size_t read = 0;
  for (const auto &segment : a.image.memory)
    read += segment.bytes.size();
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count() /
      kRounds;
  std::printf("canonicalize: %zu KB of image, %zu KB hashed, %lld us, "
              "%.0f ns/KB\n",
              read / 1024, bytes / 1024, static_cast<long long>(ns / 1000),
              static_cast<double>(ns) / static_cast<double>(read / 1024));
  EXPECT_GT(bytes, 0U);
}

} // namespace
} // namespace cmc::decoder
