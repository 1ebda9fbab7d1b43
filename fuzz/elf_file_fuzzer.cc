// libFuzzer harness: ELF files cmc opens as targets and libraries
// (decoder/elf_file), read from memory as the vDSO image is.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "decoder/elf_file.h"
#include "util/check.h"

namespace {

// Every accessor of a file that opened, with the bytes of code ranges read
// so that ASan sees a range outside the image.
void use(const cmc::decoder::ElfFile &elf) {
  (void)elf.load_base();
  (void)elf.find_symbol("main");
  (void)elf.find_section(".bss");
  (void)elf.writable_sections();
  (void)elf.functions();
  (void)elf.needed();
  (void)elf.run_paths();
  std::uint8_t sum = 0;
  for (const auto &range : elf.code())
    for (const std::byte b : range.bytes)
      sum += std::to_integer<std::uint8_t>(b);
  asm volatile("" : : "r"(sum)); // the reads stay
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const auto *bytes = reinterpret_cast<const std::byte *>(data);
  auto elf = cmc::decoder::ElfFile::from_image(
      "fuzz.elf", std::vector<std::byte>(bytes, bytes + size));
  if (!elf)
    return 0;
  CMC_CHECK(!elf->loads().empty(), "an ELF file without PT_LOAD opened");
  use(*elf);
  return 0;
}
