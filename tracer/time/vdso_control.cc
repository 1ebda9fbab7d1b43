#include "tracer/time/vdso_control.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "decoder/proc_maps.h"
#include "util/log.h"

namespace cmc::tracer {
namespace {

// What the first target showed of the vDSO: the same for every process on
// this kernel, at a different base when ASLR is on.
struct KnownVdso {
  std::vector<std::byte> image;
  std::shared_ptr<const std::vector<decoder::VdsoFunction>> plan;
  // The clock pages, relative to the vDSO's base.
  std::vector<std::pair<std::int64_t, std::uint64_t>> clock_pages;
};

Result<std::vector<std::byte>> read_image(const ProcessAccess &tracee,
                                          std::uint64_t base,
                                          std::uint64_t size) {
  std::vector<std::byte> image(size);
  const iovec remote{reinterpret_cast<void *>(base), size};
  if (auto read = tracee.read(std::span(&remote, 1), image); !read)
    return Error{"cannot read the target's vDSO: " + read.error().message};
  return image;
}

// Learns the vDSO from the target's maps and its image.
Result<KnownVdso> learn(const ProcessAccess &tracee, std::uint64_t base) {
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  KnownVdso known;
  std::uint64_t size = 0;
  for (const decoder::Mapping &mapping : *maps) {
    if (mapping.path == "[vdso]" && mapping.start == base)
      size = mapping.end - mapping.start;
    if (!mapping.path.starts_with("[vvar"))
      continue;
    // [vvar] and [vvar_vclock] are adjacent: one mprotect covers both.
    const auto offset = static_cast<std::int64_t>(mapping.start - base);
    auto &pages = known.clock_pages;
    if (!pages.empty() &&
        pages.back().first + static_cast<std::int64_t>(pages.back().second) ==
            offset)
      pages.back().second += mapping.end - mapping.start;
    else
      pages.emplace_back(offset, mapping.end - mapping.start);
  }
  if (size == 0)
    return Error{fmt::format("AT_SYSINFO_EHDR ({:#x}) is not the target's "
                             "[vdso] mapping",
                             base)};
  auto image = read_image(tracee, base, size);
  if (!image)
    return image.error();
  auto plan = decoder::plan_vdso_patches(*image);
  if (!plan)
    return plan.error();
  for (const decoder::VdsoFunction &function : *plan)
    CMC_LOG_INFO("tracer", "vDSO {} at +{:#x} ({} bytes, starts '{}'): {}",
                 function.name, function.offset, function.size,
                 function.first_instruction,
                 function.stub == decoder::VdsoStub::kTrap ? "trap" : "stub");
  known.image = std::move(*image);
  known.plan = std::make_shared<const std::vector<decoder::VdsoFunction>>(
      std::move(*plan));
  return known;
}

// The vDSO as known, learnt from this target the first time (or if this
// target's image differs from the known one).
Result<KnownVdso> known_vdso(const ProcessAccess &tracee, std::uint64_t base) {
  static std::mutex mutex;
  static std::optional<KnownVdso> known;
  const std::scoped_lock lock(mutex);
  if (known) {
    auto image = read_image(tracee, base, known->image.size());
    if (!image)
      return image.error();
    if (*image == known->image)
      return *known;
  }
  auto learnt = learn(tracee, base);
  if (!learnt)
    return learnt.error();
  known = *learnt;
  return learnt;
}

} // namespace

bool VdsoLayout::in_clock_pages(std::uint64_t address) const {
  return std::any_of(
      clock_pages_.begin(), clock_pages_.end(),
      [address](const AddressRange &range) { return range.contains(address); });
}

const decoder::VdsoFunction *
VdsoLayout::function_at(std::uint64_t address) const {
  if (!plan_ || !in_vdso(address))
    return nullptr;
  for (const decoder::VdsoFunction &function : *plan_) {
    const std::uint64_t start = vdso_.start + function.offset;
    if (address >= start && address < start + function.size)
      return &function;
  }
  return nullptr;
}

Result<VdsoLayout> control_vdso(ProcessAccess &tracee,
                                std::uint64_t vdso_base) {
  auto known = known_vdso(tracee, vdso_base);
  if (!known)
    return known.error();
  std::optional<std::uint64_t> syscall_at;
  for (const decoder::VdsoFunction &function : *known->plan) {
    if (auto patched =
            tracee.patch_code(vdso_base + function.offset, function.patch);
        !patched)
      return Error{fmt::format("cannot patch the vDSO function {}: {}",
                               function.name, patched.error().message)};
    if (function.syscall_offset && !syscall_at)
      syscall_at = vdso_base + *function.syscall_offset;
  }
  if (!syscall_at)
    return Error{"the vDSO has no function cmc routes to a system call"};
  std::vector<AddressRange> clock_pages;
  for (const auto &[offset, size] : known->clock_pages) {
    const std::uint64_t start = vdso_base + offset;
    auto done =
        tracee.inject_syscall(*syscall_at, SYS_mprotect, {start, size, 0});
    if (!done)
      return done.error();
    if (*done != 0)
      return system_error(
          fmt::format("cannot protect the target's clock pages at {:#x}",
                      start),
          static_cast<int>(-*done));
    clock_pages.push_back({start, start + size});
  }
  const AddressRange vdso{vdso_base, vdso_base + known->image.size()};
  return VdsoLayout(vdso, std::move(clock_pages), known->plan);
}

} // namespace cmc::tracer
