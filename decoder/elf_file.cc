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

// True when [offset, offset + length) lies in a file of size bytes; a
// hostile header's offset + length may wrap past 2^64.
bool inside(std::uint64_t offset, std::uint64_t length, std::size_t size) {
  return offset <= size && length <= size - offset;
}

} // namespace

ElfFile::ElfFile(std::string path, UniqueFd fd, ElfHandle elf)
    : path_(std::move(path)), fd_(std::move(fd)), elf_(std::move(elf)) {}

Result<ElfFile> ElfFile::open(const std::string &path) {
  if (!elf_library_ready())
    return Error{"libelf is unusable (elf_version failed)"};
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return system_error(fmt::format("cannot open {}", path), errno);
  ElfHandle elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  return from_elf(path, std::move(fd), std::move(elf), {});
}

Result<ElfFile> ElfFile::from_image(std::string name,
                                    std::vector<std::byte> image) {
  if (!elf_library_ready())
    return Error{"libelf is unusable (elf_version failed)"};
  ElfHandle elf(
      elf_memory(reinterpret_cast<char *>(image.data()), image.size()));
  return from_elf(std::move(name), UniqueFd(), std::move(elf),
                  std::move(image));
}

Result<ElfFile> ElfFile::from_elf(std::string path, UniqueFd fd,
                                  ElfHandle handle,
                                  std::vector<std::byte> image) {
  if (handle == nullptr || elf_kind(handle.get()) != ELF_K_ELF)
    return Error{fmt::format("{} is not an ELF file", path)};
  Elf *elf = handle.get();
  ElfFile file(path, std::move(fd), std::move(handle));
  file.image_ = std::move(image);
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
    if (phdr.p_type == PT_INTERP) {
      std::size_t size = 0;
      const char *raw = elf_rawfile(elf, &size);
      file.interpreter_ = std::string();
      if (raw != nullptr && inside(phdr.p_offset, phdr.p_filesz, size))
        file.interpreter_ = std::string(
            raw + phdr.p_offset, strnlen(raw + phdr.p_offset, phdr.p_filesz));
    }
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

template <typename Visit>
void ElfFile::for_each_table(std::uint32_t section_type, Visit visit) const {
  Elf_Scn *section = nullptr;
  while ((section = elf_nextscn(elf_.get(), section)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(section, &shdr) == nullptr || shdr.sh_type != section_type)
      continue;
    Elf_Data *data = elf_getdata(section, nullptr);
    if (data != nullptr && shdr.sh_entsize != 0)
      visit(shdr, data, shdr.sh_size / shdr.sh_entsize);
  }
}

template <typename Visit>
void ElfFile::for_each_symbol(std::uint32_t section_type, Visit visit) const {
  bool done = false;
  for_each_table(section_type, [&](const GElf_Shdr &shdr, Elf_Data *data,
                                   std::size_t count) {
    for (std::size_t i = 0; i < count && !done; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr ||
          sym.st_shndx == SHN_UNDEF)
        continue;
      const char *name = elf_strptr(elf_.get(), shdr.sh_link, sym.st_name);
      done = name != nullptr && visit(std::string_view(name), sym);
    }
  });
}

std::optional<Symbol> ElfFile::find_in_table(std::uint32_t section_type,
                                             std::string_view name) const {
  std::optional<Symbol> found;
  for_each_symbol(
      section_type, [&](std::string_view sym_name, const GElf_Sym &sym) {
        if (sym_name != name)
          return false;
        found = Symbol{std::string(name), sym.st_value, sym.st_size};
        return true;
      });
  return found;
}

std::vector<Symbol> ElfFile::symbols_of_type(unsigned type) const {
  std::vector<Symbol> symbols;
  for (const std::uint32_t table : {SHT_SYMTAB, SHT_DYNSYM})
    for_each_symbol(table, [&](std::string_view name, const GElf_Sym &sym) {
      if (GELF_ST_TYPE(sym.st_info) == type && sym.st_value != 0)
        symbols.push_back({std::string(name), sym.st_value, sym.st_size});
      return false;
    });
  std::sort(symbols.begin(), symbols.end(),
            [](const Symbol &a, const Symbol &b) {
              return a.value != b.value ? a.value < b.value : a.name < b.name;
            });
  symbols.erase(std::unique(symbols.begin(), symbols.end(),
                            [](const Symbol &a, const Symbol &b) {
                              return a.value == b.value;
                            }),
                symbols.end());
  return symbols;
}

std::vector<Symbol> ElfFile::functions() const {
  return symbols_of_type(STT_FUNC);
}

std::vector<Symbol> ElfFile::data_objects() const {
  std::vector<Symbol> objects = symbols_of_type(STT_OBJECT);
  std::erase_if(objects, [](const Symbol &object) { return object.size == 0; });
  return objects;
}

std::optional<Symbol> ElfFile::find_section(std::string_view name) const {
  std::size_t names = 0;
  if (elf_getshdrstrndx(elf_.get(), &names) != 0)
    return std::nullopt;
  Elf_Scn *section = nullptr;
  while ((section = elf_nextscn(elf_.get(), section)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(section, &shdr) == nullptr ||
        (shdr.sh_flags & SHF_ALLOC) == 0)
      continue;
    const char *section_name = elf_strptr(elf_.get(), names, shdr.sh_name);
    if (section_name != nullptr && name == section_name)
      return Symbol{std::string(name), shdr.sh_addr, shdr.sh_size};
  }
  return std::nullopt;
}

std::vector<Symbol> ElfFile::writable_sections() const {
  std::vector<Symbol> sections;
  std::size_t names = 0;
  if (elf_getshdrstrndx(elf_.get(), &names) != 0)
    return sections;
  Elf_Scn *section = nullptr;
  while ((section = elf_nextscn(elf_.get(), section)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(section, &shdr) == nullptr ||
        (shdr.sh_flags & (SHF_ALLOC | SHF_WRITE | SHF_TLS)) !=
            (SHF_ALLOC | SHF_WRITE) ||
        shdr.sh_size == 0)
      continue;
    const char *name = elf_strptr(elf_.get(), names, shdr.sh_name);
    sections.push_back(
        Symbol{name != nullptr ? name : "?", shdr.sh_addr, shdr.sh_size});
  }
  std::ranges::sort(sections, {}, &Symbol::value);
  return sections;
}

std::vector<CodeRange> ElfFile::code() const {
  std::vector<CodeRange> ranges;
  Elf_Scn *section = nullptr;
  while ((section = elf_nextscn(elf_.get(), section)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(section, &shdr) == nullptr ||
        shdr.sh_type != SHT_PROGBITS || (shdr.sh_flags & SHF_EXECINSTR) == 0)
      continue;
    Elf_Data *data = elf_getdata(section, nullptr);
    if (data != nullptr && data->d_buf != nullptr)
      ranges.push_back(
          {shdr.sh_addr,
           {static_cast<const std::byte *>(data->d_buf), data->d_size}});
  }
  if (!ranges.empty())
    return ranges;
  std::size_t size = 0;
  const char *raw = elf_rawfile(elf_.get(), &size);
  for (const LoadSegment &load : loads_)
    if ((load.flags & PF_X) != 0 && raw != nullptr &&
        inside(load.offset, load.filesz, size))
      ranges.push_back({load.vaddr,
                        {reinterpret_cast<const std::byte *>(raw) + load.offset,
                         load.filesz}});
  return ranges;
}

std::vector<std::uint64_t> ElfFile::jump_slots() const {
  std::vector<std::uint64_t> slots;
  for_each_table(
      SHT_RELA, [&](const GElf_Shdr &, Elf_Data *data, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
          GElf_Rela rela;
          if (gelf_getrela(data, static_cast<int>(i), &rela) != nullptr &&
              GELF_R_TYPE(rela.r_info) == R_X86_64_JUMP_SLOT)
            slots.push_back(rela.r_offset);
        }
      });
  std::ranges::sort(slots);
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

std::vector<std::string> ElfFile::dynamic_strings(std::int64_t tag) const {
  std::vector<std::string> strings;
  for_each_table(SHT_DYNAMIC, [&](const GElf_Shdr &shdr, Elf_Data *data,
                                  std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr ||
          dyn.d_tag != tag)
        continue;
      const char *text = elf_strptr(elf_.get(), shdr.sh_link, dyn.d_un.d_val);
      if (text != nullptr)
        strings.emplace_back(text);
    }
  });
  return strings;
}

std::vector<std::string> ElfFile::needed() const {
  return dynamic_strings(DT_NEEDED);
}

std::vector<std::string> ElfFile::run_paths() const {
  std::vector<std::string> dirs;
  auto lists = dynamic_strings(DT_RUNPATH);
  if (lists.empty())
    lists = dynamic_strings(DT_RPATH);
  for (const std::string &list : lists) {
    std::string_view rest = list;
    while (!rest.empty()) {
      const auto colon = std::min(rest.find(':'), rest.size());
      dirs.emplace_back(rest.substr(0, colon));
      rest.remove_prefix(std::min(colon + 1, rest.size()));
    }
  }
  return dirs;
}

} // namespace cmc::decoder
