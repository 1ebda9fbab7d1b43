// Inputs the fuzz harnesses (fuzz/) found failing, kept as unit tests.
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "decoder/elf_file.h"
#include "decoder/proc_maps.h"
#include "decoder/region.h"

namespace cmc::decoder {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// fuzz_proc_maps: a range whose end wraps past 2^64 ended "before" its start
// and counted as readable; cmc then allocated its length
// (--region 'cmc_state+1:18446744073709551615').
TEST(FuzzRegression, ReadableRefusesARangeThatWraps) {
  const auto maps = parse_maps(
      "555555554000-555555555000 r--p 00000000 fe:01 1310762 /demo/kv\n");
  ASSERT_TRUE(maps);
  EXPECT_FALSE(readable(*maps, 0x555555554001, kMax));
  EXPECT_FALSE(readable(*maps, 0xff20000055555555, 0x3535000000000000));
  EXPECT_FALSE(readable(*maps, kMax, 2));
  EXPECT_TRUE(readable(*maps, 0x555555554001, 0xfff));
}

// fuzz_elf_file: an executable PT_LOAD whose offset + size wraps past 2^64
// passed the bounds check, and code() gave a range outside the file.
TEST(FuzzRegression, ASegmentThatWrapsHasNoCode) {
  std::ifstream in(CMC_FIXTURE_DIR "/symbols", std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  // Without section headers, code() reads the executable segments.
  const std::uint64_t phoff = header.e_phoff;
  header.e_shoff = header.e_shnum = header.e_shstrndx = 0;
  std::memcpy(bytes.data(), &header, sizeof header);
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr;
    char *at = bytes.data() + phoff + i * sizeof phdr;
    std::memcpy(&phdr, at, sizeof phdr);
    if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) != 0)
      phdr.p_offset = kMax - phdr.p_filesz + 2;
    std::memcpy(at, &phdr, sizeof phdr);
  }
  const auto *begin = reinterpret_cast<const std::byte *>(bytes.data());
  const auto elf = ElfFile::from_image(
      "wrapped", std::vector<std::byte>(begin, begin + bytes.size()));
  ASSERT_TRUE(elf) << elf.error().message;
  EXPECT_TRUE(elf->code().empty());
}

// fuzz_region: the 8-byte fixture_counter is 16 bytes from the end of its
// RW segment; 4 bytes in, 14 bytes ran 2 bytes past it (into no mapping).
TEST(FuzzRegression, ARegionPastItsSegmentsEndIsRefused) {
  const auto elf = ElfFile::open(CMC_FIXTURE_DIR "/symbols");
  ASSERT_TRUE(elf) << elf.error().message;
  const auto spec = parse_region_spec("fixture_counter+0x4:014");
  ASSERT_TRUE(spec) << spec.error().message;
  const auto region = resolve_region(*spec, *elf);
  ASSERT_FALSE(region);
  EXPECT_NE(region.error().message.find("does not fit in the loaded segment"),
            std::string::npos)
      << region.error().message;
  EXPECT_TRUE(
      resolve_region(*parse_region_spec("fixture_counter+0x4:12"), *elf));
}

} // namespace
} // namespace cmc::decoder
