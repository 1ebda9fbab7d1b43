#pragma once

#include <memory>

struct Elf;

namespace cmc::decoder {

// Ends a libelf descriptor (elf_end): of a file, an image in memory, or an
// archive's member.
struct ElfEnd {
  void operator()(Elf *elf) const;
};
// The one owner of an Elf*: elf_begin and elf_memory results go straight
// into one.
using ElfHandle = std::unique_ptr<Elf, ElfEnd>;

} // namespace cmc::decoder
