#include "decoder/elf_handle.h"

#include <libelf.h>

namespace cmc::decoder {

void ElfEnd::operator()(Elf *elf) const { elf_end(elf); }

} // namespace cmc::decoder
