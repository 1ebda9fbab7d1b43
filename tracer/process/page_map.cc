#include "tracer/process/page_map.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/unique_fd.h"

namespace cmc::tracer {

bool writable(const decoder::Mapping &mapping) {
  return mapping.perms.size() >= 2 && mapping.perms[1] == 'w';
}

bool private_anonymous(const decoder::Mapping &mapping) {
  return mapping.perms.size() >= 4 && mapping.perms[3] == 'p' &&
         mapping.inode == 0 &&
         (mapping.path.empty() || mapping.path == "[heap]" ||
          mapping.path == "[stack]");
}

Result<std::vector<std::uint64_t>>
writable_pages_with(pid_t pid, std::span<const decoder::Mapping> mappings,
                    std::uint64_t bits) {
  const std::string path = "/proc/" + std::to_string(pid) + "/pagemap";
  const UniqueFd pagemap(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!pagemap.valid())
    return proc_error("open " + path, errno);
  std::vector<std::uint64_t> pages;
  std::vector<std::uint64_t> entries;
  for (const decoder::Mapping &mapping : mappings) {
    if (!writable(mapping))
      continue;
    entries.resize((mapping.end - mapping.start) / kPageSize);
    const auto size = static_cast<ssize_t>(entries.size() * sizeof entries[0]);
    if (pread(pagemap.get(), entries.data(), static_cast<std::size_t>(size),
              static_cast<off_t>(mapping.start / kPageSize * 8)) != size)
      return proc_error("read " + path, errno);
    for (std::size_t i = 0; i < entries.size(); ++i)
      if ((entries[i] & bits) != 0)
        pages.push_back(mapping.start + i * kPageSize);
  }
  return pages;
}

} // namespace cmc::tracer
