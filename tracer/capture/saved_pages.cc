#include "tracer/capture/saved_pages.h"

#include <algorithm>
#include <cstring>

#include "tracer/process/page_map.h"

namespace cmc::tracer {
Result<SavedPages> SavedPages::save(const Tracee &tracee) {
  SavedPages saved;
  auto regs = tracee.registers();
  if (!regs)
    return regs.error();
  auto extended = tracee.extended_registers();
  if (!extended)
    return extended.error();
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  saved.registers = *regs;
  saved.extended = std::move(*extended);
  saved.maps = std::move(*maps);
  auto pages = writable_pages_with(tracee.pid(), saved.maps,
                                   kPagePresent | kPageSwapped);
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

Result<void> SavedPages::read_now(const Tracee &tracee,
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

Result<std::vector<std::uint64_t>>
SavedPages::written(const Tracee &tracee, std::vector<std::byte> &now) const {
  auto present =
      writable_pages_with(tracee.pid(), maps, kPagePresent | kPageSwapped);
  if (!present)
    return present.error();
  now.resize(bytes.size());
  if (auto read = read_now(tracee, now); !read)
    return read.error();
  std::vector<std::uint64_t> pages;
  for (const std::uint64_t page : *present) {
    const auto found = offset_of.find(page);
    if (found == offset_of.end() ||
        std::memcmp(now.data() + found->second, bytes.data() + found->second,
                    kPageSize) != 0)
      pages.push_back(page);
  }
  return pages;
}

Result<std::size_t>
SavedPages::write_back(Tracee &tracee,
                       std::span<const std::uint64_t> written) const {
  static const std::vector<std::byte> zeros(kPageSize);
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < written.size();) {
    const auto found = offset_of.find(written[i]);
    if (found == offset_of.end()) {
      const decoder::Mapping *mapping =
          decoder::mapping_holding(maps, written[i]);
      if (mapping != nullptr && private_anonymous(*mapping)) {
        if (auto put = tracee.write(written[i], zeros); !put)
          return put.error();
      } else {
        ++unknown;
      }
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
  if (auto set = tracee.set_extended_registers(extended); !set)
    return set.error();
  return unknown;
}

} // namespace cmc::tracer
