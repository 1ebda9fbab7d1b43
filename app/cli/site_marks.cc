#include "app/cli/site_marks.h"

#include <algorithm>

namespace cmc::app {
namespace {

bool same_file(const decoder::FileId &a, const decoder::FileId &b) {
  return a.dev_major == b.dev_major && a.dev_minor == b.dev_minor &&
         a.inode == b.inode;
}

// The link-time address of a file offset, through the PT_LOAD that maps it.
std::optional<std::uint64_t> link_address(const Module &module,
                                          std::uint64_t offset) {
  for (const auto &load : module.loads)
    if (offset >= load.offset && offset < load.offset + load.filesz)
      return load.vaddr + (offset - load.offset);
  return std::nullopt;
}

void count_vdso_call(SiteMarks &marks, const tracer::ObservedSite &seen) {
  const auto call =
      std::find_if(marks.vdso_calls.begin(), marks.vdso_calls.end(),
                   [&](const VdsoCall &known) {
                     return known.function == seen.vdso_function;
                   });
  if (call != marks.vdso_calls.end())
    call->calls += seen.count;
  else
    marks.vdso_calls.push_back({seen.vdso_function, seen.count});
}

// Where an observed site falls in the scan.
struct Location {
  std::size_t module = 0;               // == modules.size(): in no scanned file
  std::optional<std::uint64_t> address; // link-time, in that module
  std::size_t site = 0;                 // == its sites.size(): none there
};

Location locate(const std::vector<Module> &modules,
                const tracer::ObservedSite &seen) {
  Location location;
  const auto module =
      std::find_if(modules.begin(), modules.end(),
                   [&](const Module &m) { return same_file(m.id, seen.file); });
  location.module = static_cast<std::size_t>(module - modules.begin());
  if (module == modules.end())
    return location;
  const auto &sites = module->file.sites;
  location.site = sites.size();
  location.address = link_address(*module, seen.file_offset);
  if (!location.address)
    return location;
  const auto site = std::lower_bound(
      sites.begin(), sites.end(), *location.address,
      [](const auto &s, std::uint64_t a) { return s.address < a; });
  if (site != sites.end() && site->address == *location.address)
    location.site = static_cast<std::size_t>(site - sites.begin());
  return location;
}

} // namespace

const decoder::SyscallSite *scanned_site(const std::vector<Module> &modules,
                                         const tracer::ObservedSite &seen) {
  const Location location = locate(modules, seen);
  if (location.module == modules.size() ||
      location.site == modules[location.module].file.sites.size())
    return nullptr;
  return &modules[location.module].file.sites[location.site];
}

SiteMarks mark_sites(const std::vector<Module> &modules,
                     const std::vector<tracer::ObservedSite> &observed) {
  SiteMarks marks;
  for (const Module &module : modules)
    marks.stops.emplace_back(module.file.sites.size(), 0);
  for (const tracer::ObservedSite &seen : observed) {
    if (seen.path == "[vdso]") {
      count_vdso_call(marks, seen);
      continue;
    }
    const Location location = locate(modules, seen);
    if (location.module < modules.size() &&
        location.site < modules[location.module].file.sites.size()) {
      marks.stops[location.module][location.site] += seen.count;
      continue;
    }
    UnscannedSite unscanned{seen.path, seen.file_offset, false, &seen};
    if (location.address) {
      unscanned.address = *location.address;
      unscanned.in_module = true;
    }
    marks.unscanned.push_back(unscanned);
  }
  return marks;
}

} // namespace cmc::app
