#include "tracer/syscalls/site_log.h"

#include <algorithm>

#include <fmt/format.h>

namespace cmc::tracer {
namespace {

void count(ObservedSite &site, long number) {
  ++site.count;
  const auto at =
      std::lower_bound(site.numbers.begin(), site.numbers.end(), number);
  if (at == site.numbers.end() || *at != number)
    site.numbers.insert(at, number);
}

Result<ObservedSite> place(const ProcessAccess &tracee, const VdsoLayout &vdso,
                           std::uint64_t address) {
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  const auto mapping =
      std::find_if(maps->begin(), maps->end(), [&](const auto &m) {
        return address >= m.start && address < m.end;
      });
  if (mapping == maps->end())
    return Error{fmt::format(
        "a system call at {:#x}, outside every mapping of the target",
        address)};
  ObservedSite site;
  site.path = mapping->path;
  site.file = {mapping->dev_major, mapping->dev_minor, mapping->inode};
  site.file_offset = address - mapping->start + mapping->offset;
  if (const auto *function = vdso.function_at(address))
    site.vdso_function = function->name;
  return site;
}

} // namespace

Result<void> SiteLog::entered(const ProcessAccess &tracee,
                              const VdsoLayout &vdso, const Registers &regs) {
  const std::uint64_t address = regs.syscall_site();
  const long number = regs.syscall_number();
  if (const auto known = by_address_.find(address);
      known != by_address_.end()) {
    last_ = known->second;
    count(sites_[last_], number);
    return {};
  }
  auto placed = place(tracee, vdso, address);
  if (!placed)
    return placed.error();
  const auto same =
      std::find_if(sites_.begin(), sites_.end(), [&](const ObservedSite &site) {
        return site.path == placed->path &&
               site.file.inode == placed->file.inode &&
               site.file_offset == placed->file_offset;
      });
  const std::size_t index = static_cast<std::size_t>(same - sites_.begin());
  if (same == sites_.end())
    sites_.push_back(std::move(*placed));
  by_address_.emplace(address, index);
  last_ = index;
  count(sites_[index], number);
  return {};
}

} // namespace cmc::tracer
