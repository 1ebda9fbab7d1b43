#include "decoder/canonical_state.h"

#include <cstring>

#include <gtest/gtest.h>

namespace cmc::decoder {
namespace {

void put(MemorySegment &segment, std::size_t offset, std::uint64_t value) {
  std::memcpy(segment.bytes.data() + offset, &value, sizeof(value));
}

// A process with one thread, a .data segment and a descriptor.
ProcessImage small_image(std::uint32_t tid) {
  ProcessImage image;
  image.pid = tid;
  MemorySegment data;
  data.name = ".data of prog";
  data.kind = MemoryKind::kData;
  data.address = 0x404000;
  data.bytes.resize(64);
  put(data, 0, 0x1122334455667788ULL);
  put(data, 16, tid); // the thread's id in its control block
  image.memory.push_back(std::move(data));
  ThreadImage thread;
  thread.id = tid;
  thread.registers.rsp = 0x7ffffffde000;
  thread.registers.fs_base = 0x404000 + 16 - 0x2d0; // struct pthread
  image.threads.push_back(thread);
  DescriptorImage fd;
  fd.fd = 3;
  fd.kind = "socket";
  fd.position = 12;
  image.descriptors.push_back(fd);
  return image;
}

CanonicalOptions raw_kept() {
  CanonicalOptions options;
  options.heap = HeapModel::kRaw;
  options.keep_bytes = true;
  return options;
}

TEST(CanonicalState, RawIsDeterministicAndKeepingBytesKeepsTheFingerprint) {
  const auto image = small_image(100);
  CanonicalOptions plain;
  plain.heap = HeapModel::kRaw;
  const auto kept = canonicalize(image, raw_kept());
  const auto hashed = canonicalize(image, plain);
  EXPECT_EQ(kept.fingerprint, hashed.fingerprint);
  EXPECT_EQ(kept.bytes_hashed, hashed.bytes_hashed);
  EXPECT_EQ(kept.bytes.size(), kept.bytes_hashed);
  EXPECT_TRUE(hashed.bytes.empty());
  EXPECT_FALSE(kept.heap.canonical);
  EXPECT_EQ(kept.heap.allocator, "raw bytes (--dedup raw)");
  ASSERT_FALSE(kept.pieces.empty());
  EXPECT_EQ(kept.pieces.front().name, "mappings");
}

TEST(CanonicalState, ThreadIdsAreHashedAsTheThreadsNumber) {
  const auto a = canonicalize(small_image(100), raw_kept());
  const auto b = canonicalize(small_image(4242), raw_kept());
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_TRUE(differences(a, b).empty());
  // The same value when it is not the thread's id is plain data; so is the
  // id anywhere but in the thread's control block.
  auto other = small_image(4242);
  put(other.memory[0], 16, 100);
  const auto c = canonicalize(other, raw_kept());
  EXPECT_NE(a.fingerprint, c.fingerprint);
  const auto where = differences(a, c);
  ASSERT_FALSE(where.empty());
  EXPECT_EQ(where.front(), (Location{".data of prog", 16}));
  auto copied = small_image(100);
  put(copied.memory[0], 24, 100);
  auto copied_again = small_image(4242);
  put(copied_again.memory[0], 24, 4242);
  EXPECT_NE(canonicalize(copied, raw_kept()).fingerprint,
            canonicalize(copied_again, raw_kept()).fingerprint);
}

TEST(CanonicalState, ARegistersByteIsNamedByItsRegister) {
  constexpr std::size_t kRsi = 13 * sizeof(std::uint64_t); // its word
  EXPECT_EQ((Location{"registers of thread 1", kRsi}).describe(),
            "registers of thread 1+rsi");
  EXPECT_EQ((Location{"registers of thread 1", kRsi + 5}).describe(),
            "registers of thread 1+rsi+5");
}

TEST(CanonicalState, DifferencesNameTheBytesAndTheMaskHidesThem) {
  const auto before = small_image(100);
  auto after = small_image(100);
  after.memory[0].bytes[0x21] = std::byte{7};
  after.threads[0].registers.rsp += 8;
  after.descriptors[0].position = 13;
  const auto a = canonicalize(before, raw_kept());
  const auto b = canonicalize(after, raw_kept());
  ASSERT_NE(a.fingerprint, b.fingerprint);
  const auto where = differences(a, b);
  ASSERT_EQ(where.size(), 3U);
  EXPECT_EQ(where[0].describe(), ".data of prog+0x21");
  EXPECT_EQ(where[1].describe(), "registers of thread 1+rsp");
  EXPECT_EQ(where[2].describe(), "fd 3 position");

  auto masked = raw_kept();
  masked.mask = where;
  EXPECT_EQ(canonicalize(before, masked).fingerprint,
            canonicalize(after, masked).fingerprint);
  masked.keep_bytes = false;
  EXPECT_EQ(canonicalize(before, masked).fingerprint,
            canonicalize(after, masked).fingerprint);
}

TEST(CanonicalState, APieceOnlyOneStateHasIsOneLocation) {
  const auto a = canonicalize(small_image(100), raw_kept());
  auto image = small_image(100);
  DescriptorImage pipe;
  pipe.fd = 4;
  pipe.kind = "pipe";
  image.descriptors.push_back(pipe);
  const auto b = canonicalize(image, raw_kept());
  EXPECT_EQ(differences(a, b), (std::vector<Location>{{"fd 4", 0}}));
}

TEST(CanonicalState, RawHashesTheSegmentsAddress) {
  auto moved = small_image(100);
  moved.memory[0].address += 0x1000;
  EXPECT_NE(canonicalize(small_image(100), raw_kept()).fingerprint,
            canonicalize(moved, raw_kept()).fingerprint);
}

// A PLT slot holds its stub's address until ld.so binds the function at
// its first call, the function's after: the two count the same, the word
// beside it does not.
TEST(CanonicalState, APltSlotCountsTheSameBoundOrNot) {
  auto lazy = small_image(100);
  lazy.plt_slots = {0x404000 + 40};
  put(lazy.memory[0], 40, 0x401036); // the stub in the executable
  auto bound = lazy;
  put(bound.memory[0], 40, 0x7ffff7e4a0c0); // the function in libc
  for (const HeapModel heap : {HeapModel::kRaw, HeapModel::kCanonical}) {
    CanonicalOptions options = raw_kept();
    options.heap = heap;
    const auto a = canonicalize(lazy, options);
    const auto b = canonicalize(bound, options);
    EXPECT_EQ(a.fingerprint, b.fingerprint);
    EXPECT_TRUE(differences(a, b).empty());
  }
  auto beside = lazy;
  put(beside.memory[0], 48, 0x7ffff7e4a0c0);
  const auto a = canonicalize(lazy, raw_kept());
  const auto c = canonicalize(beside, raw_kept());
  EXPECT_EQ(differences(a, c).front(), (Location{".data of prog", 48}));
}

} // namespace
} // namespace cmc::decoder
