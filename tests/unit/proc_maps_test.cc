#include "decoder/proc_maps.h"

#include <gtest/gtest.h>

namespace cmc::decoder {
namespace {

// Recorded from a PIE kv under ADDR_NO_RANDOMIZE, its binary deleted after
// start; the .bss tail is the anonymous mapping after the file mappings.
constexpr std::string_view kPieMaps =
    "555555554000-555555555000 r--p 00000000 fe:01 1310762                    "
    "/work/build/demo/kv (deleted)\n"
    "555555555000-555555556000 r-xp 00001000 fe:01 1310762                    "
    "/work/build/demo/kv (deleted)\n"
    "555555556000-555555557000 r--p 00002000 fe:01 1310762                    "
    "/work/build/demo/kv (deleted)\n"
    "555555557000-555555558000 rw-p 00002000 fe:01 1310762                    "
    "/work/build/demo/kv (deleted)\n"
    "555555558000-55555555a000 rw-p 00000000 00:00 0 \n"
    "555555559000-55555557a000 rw-p 00000000 00:00 0                          "
    "[heap]\n"
    "7ffff7dd3000-7ffff7df9000 r--p 00000000 fe:01 3932190                    "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0                          "
    "[vvar]\n"
    "7ffff7fc5000-7ffff7fc7000 r-xp 00000000 00:00 0                          "
    "[vdso]\n"
    "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          "
    "[stack]\n";

constexpr FileId kKv{0xfe, 0x01, 1310762};

TEST(ProcMaps, ParsesEveryField) {
  auto maps = parse_maps(kPieMaps);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  ASSERT_EQ(maps->size(), 10U);
  const Mapping &text = (*maps)[1];
  EXPECT_EQ(text.start, 0x555555555000U);
  EXPECT_EQ(text.end, 0x555555556000U);
  EXPECT_EQ(text.perms, "r-xp");
  EXPECT_EQ(text.offset, 0x1000U);
  EXPECT_EQ(text.dev_major, 0xfeU);
  EXPECT_EQ(text.dev_minor, 0x01U);
  EXPECT_EQ(text.inode, 1310762U);
  EXPECT_EQ(text.path, "/work/build/demo/kv (deleted)");
  EXPECT_EQ((*maps)[4].path, "");
  EXPECT_EQ((*maps)[8].path, "[vdso]");
}

TEST(ProcMaps, RejectsMalformedText) {
  EXPECT_FALSE(parse_maps("not a maps line\n").ok());
  EXPECT_FALSE(parse_maps("5555-6666 r-xp 0000 fe:01\n").ok());
}

TEST(ProcMaps, PieBiasIsTheOffsetZeroMappingMinusTheLoadBase) {
  auto maps = parse_maps(kPieMaps);
  ASSERT_TRUE(maps.ok());
  auto bias = load_bias(*maps, kKv, 0);
  ASSERT_TRUE(bias.ok()) << bias.error().message;
  EXPECT_EQ(*bias, 0x555555554000U);
}

TEST(ProcMaps, MatchesTheExecutableByInodeNotByPath) {
  auto maps = parse_maps(kPieMaps);
  ASSERT_TRUE(maps.ok());
  // libc also has a mapping at offset 0; only the inode tells them apart.
  auto libc = load_bias(*maps, FileId{0xfe, 0x01, 3932190}, 0);
  ASSERT_TRUE(libc.ok());
  EXPECT_EQ(*libc, 0x7ffff7dd3000U);
  EXPECT_FALSE(load_bias(*maps, FileId{0xfe, 0x01, 42}, 0).ok());
}

TEST(ProcMaps, NoPieBiasIsZero) {
  auto maps =
      parse_maps("00400000-00401000 r--p 00000000 fe:01 77 /srv/kv_nopie\n"
                 "00401000-00402000 r-xp 00001000 fe:01 77 /srv/kv_nopie\n");
  ASSERT_TRUE(maps.ok());
  auto bias = load_bias(*maps, FileId{0xfe, 0x01, 77}, 0x400000);
  ASSERT_TRUE(bias.ok());
  EXPECT_EQ(*bias, 0U);
}

TEST(ProcMaps, ReadableCoversRangesAcrossAdjacentMappings) {
  auto maps = parse_maps(kPieMaps);
  ASSERT_TRUE(maps.ok());
  // .data in the file mapping running on into the anonymous .bss tail.
  EXPECT_TRUE(readable(*maps, 0x555555557ff0, 0x20));
  EXPECT_TRUE(readable(*maps, 0x555555558000, 2));
  // Past the end of the last mapping before the gap.
  EXPECT_FALSE(readable(*maps, 0x55555557a000 - 1, 2));
  EXPECT_FALSE(readable(*maps, 0x1000, 2));
}

} // namespace
} // namespace cmc::decoder
