#include "decoder/library_search.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "decoder/elf_handle.h"

namespace cmc::decoder {
namespace {

constexpr std::string_view kCacheMagic = "glibc-ld.so.cache1.1";
constexpr std::array<const char *, 4> kDefaultDirs{
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};

struct CacheEntry {
  std::int32_t flags;
  std::uint32_t key;
  std::uint32_t value;
  std::uint32_t os_version;
  std::uint64_t hwcap;
};

const std::vector<std::pair<std::string, std::string>> &system_cache() {
  static const auto cache = [] {
    std::ifstream file("/etc/ld.so.cache", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    return parse_ld_so_cache(bytes);
  }();
  return cache;
}

bool exists(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

// The path with symbolic links resolved, to know a file by two names.
std::string canonical(const std::string &path) {
  char *resolved = realpath(path.c_str(), nullptr);
  std::string text = resolved != nullptr ? resolved : path;
  std::free(resolved);
  return text;
}

std::string dir_of(const std::string &path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Adds the defined function symbols of one archive member's .symtab.
void add_member_functions(
    Elf *member, std::set<std::pair<std::string, std::uint64_t>> &functions) {
  Elf_Scn *section = nullptr;
  while ((section = elf_nextscn(member, section)) != nullptr) {
    GElf_Shdr shdr;
    Elf_Data *data = nullptr;
    if (gelf_getshdr(section, &shdr) == nullptr || shdr.sh_type != SHT_SYMTAB ||
        (data = elf_getdata(section, nullptr)) == nullptr)
      continue;
    GElf_Sym sym;
    for (int i = 0; gelf_getsym(data, i, &sym) != nullptr; ++i) {
      const char *name = elf_strptr(member, shdr.sh_link, sym.st_name);
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
          name != nullptr)
        functions.emplace(name, sym.st_size);
    }
  }
}

} // namespace

std::vector<std::pair<std::string, std::string>>
parse_ld_so_cache(std::string_view bytes) {
  // Header: magic, then nlibs and len_strings (uint32 each), 5 more uint32
  // words of flags and padding; entries follow; string offsets count from
  // the start of the file.
  constexpr std::size_t kHeader = kCacheMagic.size() + std::size_t{4} * 8;
  std::vector<std::pair<std::string, std::string>> entries;
  if (!bytes.starts_with(kCacheMagic) || bytes.size() < kHeader)
    return entries;
  std::uint32_t count = 0;
  std::memcpy(&count, bytes.data() + kCacheMagic.size(), sizeof count);
  const auto text = [&](std::uint32_t offset) -> std::string {
    if (offset >= bytes.size())
      return {};
    return std::string(
        bytes.substr(offset).substr(0, bytes.substr(offset).find('\0')));
  };
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = kHeader + i * sizeof(CacheEntry);
    if (at + sizeof(CacheEntry) > bytes.size())
      break;
    CacheEntry entry{};
    std::memcpy(&entry, bytes.data() + at, sizeof entry);
    entries.emplace_back(text(entry.key), text(entry.value));
  }
  return entries;
}

std::optional<std::string>
find_library(const std::string &name, const std::vector<std::string> &run_paths,
             const std::string &origin) {
  if (name.find('/') != std::string::npos)
    return exists(name) ? std::optional(name) : std::nullopt;
  for (std::string dir : run_paths) {
    if (const auto at = dir.find("$ORIGIN"); at != std::string::npos)
      dir.replace(at, 7, origin);
    if (const std::string path = fmt::format("{}/{}", dir, name); exists(path))
      return path;
  }
  for (const auto &[key, path] : system_cache())
    if (key == name && exists(path))
      return path;
  for (const char *dir : kDefaultDirs)
    if (const std::string path = fmt::format("{}/{}", dir, name); exists(path))
      return path;
  return std::nullopt;
}

Result<std::vector<std::string>> loaded_libraries(const ElfFile &executable) {
  std::vector<std::string> libraries;
  std::set<std::string> seen;
  std::deque<std::pair<std::string, std::string>> wanted; // name, needed by
  for (const std::string &name : executable.needed())
    wanted.emplace_back(name, executable.path());
  std::vector<std::string> run_paths = executable.run_paths();
  while (!wanted.empty()) {
    const auto [name, by] = wanted.front();
    wanted.pop_front();
    if (!seen.insert(name).second)
      continue;
    const auto path = find_library(name, run_paths, dir_of(by));
    if (!path)
      return Error{fmt::format("cannot find {} (needed by {})", name, by)};
    auto library = ElfFile::open(*path);
    if (!library)
      return library.error();
    if (!seen.insert(canonical(*path)).second)
      continue;
    libraries.push_back(*path);
    for (const std::string &next : library->needed())
      wanted.emplace_back(next, *path);
  }
  const auto &interpreter = executable.interpreter();
  if (interpreter && exists(*interpreter) &&
      seen.insert(canonical(*interpreter)).second)
    libraries.push_back(*interpreter);
  return libraries;
}

std::optional<std::string> find_static_libc() {
  std::vector<std::string> dirs;
  if (const auto shared = find_library("libc.so.6", {}, "")) {
    dirs.push_back(dir_of(canonical(*shared)));
    dirs.push_back(dir_of(*shared));
    if (shared->starts_with("/lib/"))
      dirs.push_back("/usr" + dir_of(*shared));
  }
  dirs.insert(dirs.end(), kDefaultDirs.begin(), kDefaultDirs.end());
  for (const std::string &dir : dirs)
    if (const std::string path = dir + "/libc.a"; exists(path))
      return path;
  return std::nullopt;
}

Result<StaticLibrary> StaticLibrary::open(const std::string &path) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    return Error{"libelf is unusable (elf_version failed)"};
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return system_error(fmt::format("cannot open {}", path), errno);
  const ElfHandle archive(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (archive == nullptr || elf_kind(archive.get()) != ELF_K_AR)
    return Error{fmt::format("{} is not an ar archive", path)};
  StaticLibrary library;
  library.path_ = path;
  Elf_Cmd command = ELF_C_READ_MMAP;
  // elf_next before the member ends: it tells where the next one starts.
  while (const ElfHandle member{elf_begin(fd.get(), command, archive.get())}) {
    add_member_functions(member.get(), library.functions_);
    command = elf_next(member.get());
  }
  return library;
}

bool StaticLibrary::defines(const Symbol &function) const {
  return functions_.contains({function.name, function.size});
}

} // namespace cmc::decoder
