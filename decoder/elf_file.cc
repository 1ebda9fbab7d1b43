#include "decoder/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cmc::decoder {
namespace {

constexpr std::uint64_t kPageSize = 4096;

bool elf_library_ready() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

} // namespace

void ElfFile::ElfCloser::operator()(Elf *elf) const { elf_end(elf); }

ElfFile::ElfFile(std::string path, UniqueFd fd, Elf *elf)
    : path_(std::move(path)), fd_(std::move(fd)), elf_(elf) {}

Result<ElfFile> ElfFile::open(const std::string &path) {
  if (!elf_library_ready())
    return Error{"libelf is unusable (elf_version failed)"};
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return Error{fmt::format("cannot open {}: {}", path, std::strerror(errno))};
  Elf *elf = elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr)
      elf_end(elf);
    return Error{fmt::format("{} is not an ELF file", path)};
  }
  ElfFile file(path, std::move(fd), elf);
  GElf_Ehdr header;
  if (gelf_getehdr(elf, &header) == nullptr)
    return Error{fmt::format("{}: unreadable ELF header", path)};
  if (header.e_machine != EM_X86_64)
    return Error{fmt::format("{} is not an x86-64 ELF file", path)};
  if (header.e_type != ET_EXEC && header.e_type != ET_DYN)
    return Error{fmt::format("{} is not an executable", path)};
  file.type_dyn_ = header.e_type == ET_DYN;
  file.entry_ = header.e_entry;
  std::size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0)
    return Error{fmt::format("{}: unreadable program headers", path)};
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr)
      continue;
    if (phdr.p_type == PT_INTERP)
      file.has_interp_ = true;
    if (phdr.p_type == PT_LOAD)
      file.loads_.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset,
                             phdr.p_filesz, phdr.p_flags});
  }
  if (file.loads_.empty())
    return Error{fmt::format("{} has no loadable segment", path)};
  return file;
}

std::uint64_t ElfFile::load_base() const {
  const auto lowest = std::min_element(
      loads_.begin(), loads_.end(),
      [](const auto &a, const auto &b) { return a.vaddr < b.vaddr; });
  return lowest->vaddr & ~(kPageSize - 1);
}

std::optional<Symbol> ElfFile::find_symbol(std::string_view name) const {
  if (auto found = find_in_table(SHT_SYMTAB, name))
    return found;
  return find_in_table(SHT_DYNSYM, name);
}

std::optional<Symbol> ElfFile::find_in_table(std::uint32_t section_type,
                                             std::string_view name) const {
  Elf_Scn *section = nullptr;
  while ((section = elf_nextscn(elf_.get(), section)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(section, &shdr) == nullptr || shdr.sh_type != section_type)
      continue;
    Elf_Data *data = elf_getdata(section, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0)
      continue;
    const std::size_t count = shdr.sh_size / shdr.sh_entsize;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr ||
          sym.st_shndx == SHN_UNDEF)
        continue;
      const char *sym_name = elf_strptr(elf_.get(), shdr.sh_link, sym.st_name);
      if (sym_name != nullptr && name == sym_name)
        return Symbol{std::string(name), sym.st_value, sym.st_size};
    }
  }
  return std::nullopt;
}

} // namespace cmc::decoder
