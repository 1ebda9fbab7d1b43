#include "decoder/library_search.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>

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

} // namespace

std::vector<std::pair<std::string, std::string>>
parse_ld_so_cache(std::string_view bytes) {
  // Header: magic, then nlibs and len_strings (uint32 each), 5 more uint32
  // words of flags and padding; entries follow; string offsets count from
  // the start of the file.
  constexpr std::size_t kHeader = kCacheMagic.size() + 4 * 8;
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
    if (const std::string path = dir + "/" + name; exists(path))
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

} // namespace cmc::decoder
