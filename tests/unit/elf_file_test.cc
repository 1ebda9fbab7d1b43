#include "decoder/elf_file.h"

#include <gtest/gtest.h>

#include <fstream>

namespace cmc::decoder {
namespace {

std::string fixture(const std::string &name) {
  return std::string(CMC_FIXTURE_DIR) + "/" + name;
}

ElfFile open_fixture(const std::string &name) {
  auto elf = ElfFile::open(fixture(name));
  EXPECT_TRUE(elf.ok()) << (elf.ok() ? "" : elf.error().message);
  return std::move(elf).value();
}

TEST(ElfFile, PieHasSymbolsWithSizesAndAnInterpreter) {
  const ElfFile elf = open_fixture("symbols");
  EXPECT_TRUE(elf.position_independent());
  EXPECT_TRUE(elf.has_interpreter());
  EXPECT_EQ(elf.load_base(), 0U);
  const auto cells = elf.find_symbol("fixture_cells");
  ASSERT_TRUE(cells);
  EXPECT_EQ(cells->size, 6U);
  EXPECT_NE(cells->value, 0U);
  const auto counter = elf.find_symbol("fixture_counter");
  ASSERT_TRUE(counter);
  EXPECT_EQ(counter->size, sizeof(long));
  EXPECT_FALSE(elf.find_symbol("no_such_symbol"));
}

TEST(ElfFile, NoPieIsFixedAtItsLinkAddress) {
  const ElfFile elf = open_fixture("symbols_nopie");
  EXPECT_FALSE(elf.position_independent());
  EXPECT_EQ(elf.load_base(), 0x400000U);
  const auto cells = elf.find_symbol("fixture_cells");
  ASSERT_TRUE(cells);
  EXPECT_GT(cells->value, 0x400000U);
  EXPECT_EQ(cells->size, 6U);
}

TEST(ElfFile, StrippedRdynamicPieFindsSymbolsInDynsym) {
  const ElfFile elf = open_fixture("symbols_stripped");
  EXPECT_TRUE(elf.position_independent());
  const auto cells = elf.find_symbol("fixture_cells");
  ASSERT_TRUE(cells);
  EXPECT_EQ(cells->size, 6U);
  // The unstripped build has the same layout: same link-time address.
  const auto unstripped = open_fixture("symbols").find_symbol("fixture_cells");
  ASSERT_TRUE(unstripped);
  EXPECT_EQ(cells->value, unstripped->value);
}

TEST(ElfFile, StaticPieIsPositionIndependentWithoutInterpreter) {
  const ElfFile elf = open_fixture("symbols_static_pie");
  EXPECT_TRUE(elf.position_independent());
  EXPECT_FALSE(elf.has_interpreter());
  const auto counter = elf.find_symbol("fixture_counter");
  ASSERT_TRUE(counter);
  EXPECT_EQ(counter->size, sizeof(long));
}

TEST(ElfFile, RejectsMissingAndNonElfFiles) {
  const auto missing = ElfFile::open(fixture("does_not_exist"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos);

  const std::string text = ::testing::TempDir() + "/not_elf.txt";
  std::ofstream(text) << "#!/bin/sh\necho hello\n";
  const auto not_elf = ElfFile::open(text);
  ASSERT_FALSE(not_elf.ok());
  EXPECT_NE(not_elf.error().message.find("is not an ELF file"),
            std::string::npos);
}

ElfFile open_demo(const std::string &name) {
  auto elf = ElfFile::open(std::string(CMC_DEMO_DIR) + "/" + name);
  EXPECT_TRUE(elf.ok()) << (elf.ok() ? "" : elf.error().message);
  return std::move(elf).value();
}

// kv calls functions of libc through its PLT: lazily bound, their
// slots follow the 3 words .got.plt reserves for ld.so, one per entry of
// .rela.plt (24 bytes each).
TEST(ElfFile, JumpSlotsAreTheWordsOfGotPlt) {
  const ElfFile elf = open_demo("kv");
  const auto slots = elf.jump_slots();
  const auto got_plt = elf.find_section(".got.plt");
  const auto rela_plt = elf.find_section(".rela.plt");
  ASSERT_TRUE(got_plt);
  ASSERT_TRUE(rela_plt);
  ASSERT_EQ(slots.size(), rela_plt->size / 24);
  EXPECT_EQ(slots.size(), got_plt->size / 8 - 3);
  for (std::size_t i = 0; i < slots.size(); ++i)
    EXPECT_EQ(slots[i], got_plt->value + 8 * (3 + i)) << i;
}

// Linked -z now: the same slots, in .got (read-only once relocated), and
// no .got.plt. Linked static, no PLT slot at all.
TEST(ElfFile, JumpSlotsOfABuildBoundAtStartAndOfAStaticOne) {
  const ElfFile now = open_demo("kv_now");
  const auto slots = now.jump_slots();
  EXPECT_EQ(slots.size(), open_demo("kv").jump_slots().size());
  EXPECT_FALSE(now.find_section(".got.plt"));
  const auto got = now.find_section(".got");
  ASSERT_TRUE(got);
  for (const std::uint64_t slot : slots) {
    EXPECT_GE(slot, got->value);
    EXPECT_LE(slot + 8, got->value + got->size);
  }
  EXPECT_TRUE(open_demo("kv_static_pie").jump_slots().empty());
}

} // namespace
} // namespace cmc::decoder
