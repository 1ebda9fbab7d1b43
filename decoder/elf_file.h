#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/elf_handle.h"
#include "decoder/symbol.h"
#include "util/result.h"
#include "util/unique_fd.h"

struct Elf;

namespace cmc::decoder {

struct LoadSegment {
  std::uint64_t vaddr = 0;
  std::uint64_t memsz = 0;
  std::uint64_t offset = 0;
  std::uint64_t filesz = 0;
  std::uint32_t flags = 0; // PF_R | PF_W | PF_X
};

// Bytes of executable code at their link-time address; they stay valid
// while the ElfFile lives.
struct CodeRange {
  std::uint64_t address = 0;
  std::span<const std::byte> bytes;
};

// An ELF executable or shared library opened read-only with elfutils.
class ElfFile {
public:
  // Fails with a one-line reason for a missing file or a non-ELF file.
  [[nodiscard]] static Result<ElfFile> open(const std::string &path);
  // An ELF image already in memory (the vDSO read from a target); name is
  // used in messages.
  [[nodiscard]] static Result<ElfFile> from_image(std::string name,
                                                  std::vector<std::byte> image);

  ElfFile(ElfFile &&) noexcept = default;
  ElfFile &operator=(ElfFile &&) noexcept = default;
  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;
  ~ElfFile() = default;

  [[nodiscard]] const std::string &path() const { return path_; }
  // ET_DYN: the kernel or ld.so places it at a load bias (PIE, static-pie).
  [[nodiscard]] bool position_independent() const { return type_dyn_; }
  [[nodiscard]] bool has_interpreter() const {
    return interpreter_.has_value();
  }
  // The PT_INTERP path ("/lib64/ld-linux-x86-64.so.2").
  [[nodiscard]] const std::optional<std::string> &interpreter() const {
    return interpreter_;
  }
  [[nodiscard]] const std::vector<LoadSegment> &loads() const { return loads_; }
  // The lowest PT_LOAD p_vaddr rounded down to the page size: the address
  // that the mapping at file offset 0 has before relocation.
  [[nodiscard]] std::uint64_t load_base() const;
  // e_entry: the link-time entry point (AT_ENTRY minus the load bias).
  [[nodiscard]] std::uint64_t entry() const { return entry_; }

  // A defined data or function symbol, looked up in .symtab, then .dynsym.
  [[nodiscard]] std::optional<Symbol> find_symbol(std::string_view name) const;

  // A section the program loads (SHF_ALLOC), by name (".bss", ".data"):
  // its address and size as a Symbol. Section headers survive stripping.
  [[nodiscard]] std::optional<Symbol> find_section(std::string_view name) const;
  // The loaded writable sections (.data, .bss, ...; not the TLS templates,
  // which are copied elsewhere), by address.
  [[nodiscard]] std::vector<Symbol> writable_sections() const;

  // Defined function symbols of .symtab and .dynsym, by address, once each.
  [[nodiscard]] std::vector<Symbol> functions() const;
  // Defined data objects (STT_OBJECT, of a size) of .symtab and .dynsym,
  // by address, once each: what a program's globals are called.
  [[nodiscard]] std::vector<Symbol> data_objects() const;
  // The executable sections (SHF_EXECINSTR), or the executable PT_LOAD
  // segments when the section headers are gone.
  [[nodiscard]] std::vector<CodeRange> code() const;
  // DT_NEEDED entries, and the DT_RUNPATH (else DT_RPATH) directories.
  [[nodiscard]] std::vector<std::string> needed() const;
  [[nodiscard]] std::vector<std::string> run_paths() const;
  // The link-time addresses of the GOT words that the R_X86_64_JUMP_SLOT
  // relocations (.rela.plt, DT_JMPREL) name, sorted: ld.so points each at
  // its PLT stub at load time and, bound lazily, rewrites it with the
  // function's address at the first call through the PLT.
  [[nodiscard]] std::vector<std::uint64_t> jump_slots() const;

private:
  ElfFile(std::string path, UniqueFd fd, ElfHandle elf);
  // Checks the header and reads the program headers of a new Elf handle.
  [[nodiscard]] static Result<ElfFile> from_elf(std::string path, UniqueFd fd,
                                                ElfHandle handle,
                                                std::vector<std::byte> image);
  [[nodiscard]] std::optional<Symbol>
  find_in_table(std::uint32_t section_type, std::string_view name) const;
  // The defined symbols of type (STT_FUNC, ...) with an address, by
  // address, the first name of each address kept.
  [[nodiscard]] std::vector<Symbol> symbols_of_type(unsigned type) const;
  // Calls visit(shdr, data, entry count) for every section of section_type.
  template <typename Visit>
  void for_each_table(std::uint32_t section_type, Visit visit) const;
  // Calls visit(name, sym) for every defined symbol of the tables of
  // section_type, until it returns true.
  template <typename Visit>
  void for_each_symbol(std::uint32_t section_type, Visit visit) const;
  // The strings of the dynamic entries with tag.
  [[nodiscard]] std::vector<std::string>
  dynamic_strings(std::int64_t tag) const;

  std::string path_;
  UniqueFd fd_;
  std::vector<std::byte> image_; // the bytes of an in-memory image
  ElfHandle elf_;
  bool type_dyn_ = false;
  std::optional<std::string> interpreter_;
  std::uint64_t entry_ = 0;
  std::vector<LoadSegment> loads_;
};

} // namespace cmc::decoder
