// The Capstone owners decode and free on every path.
#include "decoder/capstone.h"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace cmc::decoder {
namespace {

constexpr std::array kCode{std::byte{0x0f}, std::byte{0x05}, // syscall
                           std::byte{0xc3},                  // ret
                           std::byte{0x06}};                 // invalid

TEST(Capstone, DisassemblesUpToWhatDoesNotDecode) {
  auto capstone = Capstone::open(false);
  ASSERT_TRUE(capstone.ok()) << capstone.error().message;
  const Instructions decoded =
      Instructions::disassemble(*capstone, kCode, 0x1000);
  ASSERT_EQ(decoded.get().size(), 2U);
  EXPECT_EQ(std::string_view(decoded.get()[0].mnemonic), "syscall");
  EXPECT_EQ(decoded.get()[1].address, 0x1002U);
  EXPECT_TRUE(Instructions::disassemble(*capstone, std::span(kCode).last(1), 0)
                  .get()
                  .empty());
}

TEST(Capstone, IteratesWithOneBuffer) {
  auto capstone = Capstone::open(true);
  ASSERT_TRUE(capstone.ok()) << capstone.error().message;
  auto buffer = Instructions::buffer(*capstone);
  ASSERT_TRUE(buffer.ok()) << buffer.error().message;
  Capstone moved = std::move(*capstone);
  const auto *code = reinterpret_cast<const std::uint8_t *>(kCode.data());
  std::size_t size = kCode.size();
  std::uint64_t address = 0;
  int count = 0;
  while (
      cs_disasm_iter(moved.get(), &code, &size, &address, buffer->get().data()))
    ++count;
  EXPECT_EQ(count, 2);
}

} // namespace
} // namespace cmc::decoder
