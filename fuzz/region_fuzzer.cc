// libFuzzer harness: --region specs (decoder/region), resolved against the
// symbols fixture (tests/fixtures/symbols.c).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "decoder/elf_file.h"
#include "decoder/region.h"
#include "util/check.h"

namespace {

const cmc::decoder::ElfFile &fixture() {
  static const cmc::decoder::ElfFile elf = [] {
    auto opened = cmc::decoder::ElfFile::open(CMC_FIXTURE_DIR "/symbols");
    if (!opened) {
      std::fprintf(stderr, "%s\n", opened.error().message.c_str());
      std::exit(1);
    }
    return std::move(*opened);
  }();
  return elf;
}

// True when [address, address + length) lies in one PT_LOAD segment.
bool inside_a_segment(const cmc::decoder::ElfFile &elf, std::uint64_t address,
                      std::uint64_t length) {
  return std::ranges::any_of(elf.loads(), [&](const auto &load) {
    return address >= load.vaddr && length <= load.memsz &&
           address - load.vaddr <= load.memsz - length;
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const auto spec = cmc::decoder::parse_region_spec(input);
  if (!spec)
    return 0;
  CMC_CHECK(spec->text == input, "a region spec lost its text");
  CMC_CHECK(!spec->symbol.empty(), "a region spec without a symbol");
  const auto region = cmc::decoder::resolve_region(*spec, fixture());
  if (!region)
    return 0;
  CMC_CHECK(region->length > 0, "an empty region");
  CMC_CHECK(region->length - 1 <= std::numeric_limits<std::uint64_t>::max() -
                                      region->link_address,
            "a region that wraps around the address space");
  CMC_CHECK(inside_a_segment(fixture(), region->link_address, region->length),
            "a region outside the loaded segments of its symbol's file");
  return 0;
}
