#include "bench/saved_pages.h"

#include <algorithm>

#include "bench/soft_dirty.h"

namespace cmc::bench {

Result<SavedPages> SavedPages::save(const tracer::Tracee &tracee) {
  SavedPages saved;
  auto regs = tracee.registers();
  if (!regs)
    return regs.error();
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  saved.registers = *regs;
  saved.maps = std::move(*maps);
  auto pages = writable_pages_with(tracee.pid(), saved.maps, kPagePresent);
  if (!pages)
    return pages.error();
  for (const std::uint64_t page : *pages) {
    saved.offset_of[page] = saved.pages.size() * kPageSize;
    saved.pages.push_back({reinterpret_cast<void *>(page), kPageSize});
  }
  saved.bytes.resize(saved.pages.size() * kPageSize);
  if (auto read = saved.read_now(tracee, saved.bytes); !read)
    return read.error();
  return saved;
}

Result<void> SavedPages::read_now(const tracer::Tracee &tracee,
                                  std::span<std::byte> now) const {
  // One process_vm_readv takes at most IOV_MAX (1024) ranges.
  constexpr std::size_t kRanges = 1024;
  for (std::size_t i = 0; i < pages.size(); i += kRanges) {
    const std::size_t n = std::min(kRanges, pages.size() - i);
    if (auto read = tracee.read(std::span(pages).subspan(i, n),
                                now.subspan(i * kPageSize, n * kPageSize));
        !read)
      return read.error();
  }
  return {};
}

Result<std::size_t>
SavedPages::write_back(tracer::Tracee &tracee,
                       std::span<const std::uint64_t> written) const {
  std::size_t unsaved = 0;
  for (std::size_t i = 0; i < written.size();) {
    const auto found = offset_of.find(written[i]);
    if (found == offset_of.end()) {
      ++unsaved;
      ++i;
      continue;
    }
    std::size_t n = 1;
    while (i + n < written.size() &&
           written[i + n] == written[i] + n * kPageSize &&
           offset_of.contains(written[i + n]) &&
           offset_of.at(written[i + n]) == found->second + n * kPageSize)
      ++n;
    const auto page_bytes =
        std::span(bytes).subspan(found->second, n * kPageSize);
    if (auto put = tracee.write(written[i], page_bytes); !put)
      return put.error();
    i += n;
  }
  if (auto set = tracee.set_registers(registers); !set)
    return set.error();
  return unsaved;
}

} // namespace cmc::bench
