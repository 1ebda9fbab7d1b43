#include "bench/page_tracker.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "bench/soft_dirty.h"
#include "bench/stop_call.h"
#include "tracer/process/page_map.h"

namespace cmc::bench {

namespace {

// The kernel's ABI (Linux 6.7) where Debian 12's headers (6.1) lack it.
constexpr std::uint64_t kWpUnpopulated = 1ULL << 13; // UFFD_FEATURE_*
constexpr std::uint64_t kWpAsync = 1ULL << 15;
constexpr std::uint64_t kPageIsWpAllowed = 1ULL << 0; // PAGE_IS_*
constexpr std::uint64_t kPageIsWritten = 1ULL << 1;
constexpr std::uint64_t kScanProtect = 1ULL << 0; // PM_SCAN_WP_MATCHING

// struct pm_scan_arg and struct page_region of linux/fs.h.
struct PageScan {
  std::uint64_t size = sizeof(PageScan);
  std::uint64_t flags = 0;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t walk_end = 0;
  std::uint64_t vec = 0;
  std::uint64_t vec_len = 0;
  std::uint64_t max_pages = 0;
  std::uint64_t category_inverted = 0;
  std::uint64_t category_mask = 0;
  std::uint64_t category_anyof_mask = 0;
  std::uint64_t return_mask = 0;
};
struct PageRegion {
  std::uint64_t start;
  std::uint64_t end;
  std::uint64_t categories;
};
const unsigned long kPagemapScan = _IOWR('f', 16, PageScan);

bool writable(const decoder::Mapping &mapping) {
  return mapping.perms.size() > 1 && mapping.perms[1] == 'w';
}

} // namespace

Result<PageTracker>
PageTracker::create(tracer::Tracee &tracee, const user_regs_struct &at_call,
                    PageTracking how, std::span<const decoder::Mapping> maps) {
  PageTracker tracker(how, tracee.pid());
  if (how == PageTracking::kWriteProtect)
    if (auto watched = tracker.watch(tracee, at_call, maps); !watched)
      return watched.error();
  return tracker;
}

Result<void> PageTracker::watch(tracer::Tracee &tracee,
                                const user_regs_struct &at_call,
                                std::span<const decoder::Mapping> maps) {
  // A userfaultfd tracks the memory of the process that made it.
  auto made = call_at_stop(pid_, at_call, SYS_userfaultfd, {O_CLOEXEC});
  if (!made)
    return made.error();
  if (made->result < 0)
    return system_error("userfaultfd in the target",
                        static_cast<int>(-made->result));
  auto kept = tracee.duplicate_fd(static_cast<int>(made->result));
  const auto fd = static_cast<std::uint64_t>(made->result);
  if (auto closed = call_at_stop(pid_, at_call, SYS_close, {fd}); !closed)
    return closed.error();
  if (!kept)
    return Error{"cannot take the target's userfaultfd"};
  userfaultfd_ = std::move(*kept);
  uffdio_api api{UFFD_API, kWpAsync | kWpUnpopulated, 0};
  if (ioctl(userfaultfd_.get(), UFFDIO_API, &api) != 0)
    return system_error("UFFDIO_API", errno);
  start_ = ~std::uint64_t{0};
  for (const decoder::Mapping &mapping : maps) {
    if (!writable(mapping))
      continue;
    uffdio_register range{{mapping.start, mapping.end - mapping.start},
                          UFFDIO_REGISTER_MODE_WP,
                          0};
    if (ioctl(userfaultfd_.get(), UFFDIO_REGISTER, &range) != 0)
      return system_error("UFFDIO_REGISTER of " + mapping.path, errno);
    start_ = std::min(start_, mapping.start);
    end_ = std::max(end_, mapping.end);
  }
  const std::string path = fmt::format("/proc/{}/pagemap", pid_);
  pagemap_ = UniqueFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!pagemap_.valid())
    return proc_error("open " + path, errno);
  // Registered pages start unprotected, each one as if written.
  if (auto protected_all = scan(0, true, false); !protected_all)
    return protected_all.error();
  return {};
}

Result<void> PageTracker::arm() {
  switch (how_) {
  case PageTracking::kCompare:
    return {};
  case PageTracking::kSoftDirty:
    if (!clear_soft_dirty(pid_))
      return Error{"cannot write clear_refs"};
    return {};
  case PageTracking::kWriteProtect:
    if (auto protected_written = scan(kPageIsWritten, true, false);
        !protected_written)
      return protected_written.error();
    return {};
  }
  return {};
}

Result<std::vector<std::uint64_t>>
PageTracker::written(const tracer::Tracee &tracee,
                     const tracer::SavedPages &saved) {
  switch (how_) {
  case PageTracking::kCompare:
    return saved.written(tracee, now_);
  case PageTracking::kSoftDirty:
    return tracer::writable_pages_with(pid_, saved.maps,
                                       tracer::kPageSoftDirty);
  case PageTracking::kWriteProtect:
    // Pages of mappings not registered have no protection: each one reads
    // as written.
    return scan(kPageIsWpAllowed | kPageIsWritten, false, true);
  }
  return Error{"no such page tracking"};
}

Result<std::vector<std::uint64_t>>
PageTracker::scan(std::uint64_t categories, bool protect, bool collect) const {
  std::vector<PageRegion> regions(collect ? 256 : 0);
  std::vector<std::uint64_t> pages;
  PageScan arg;
  arg.flags = protect ? kScanProtect : 0;
  arg.end = end_;
  arg.category_mask = categories;
  arg.return_mask = categories;
  arg.vec = reinterpret_cast<std::uint64_t>(regions.data());
  arg.vec_len = regions.size();
  for (arg.walk_end = start_; arg.walk_end < end_;) {
    arg.start = arg.walk_end;
    const int found = ioctl(pagemap_.get(), kPagemapScan, &arg);
    if (found < 0)
      return system_error("PAGEMAP_SCAN", errno);
    if (arg.walk_end <= arg.start)
      return Error{"PAGEMAP_SCAN made no progress"};
    for (int i = 0; i < found; ++i)
      for (std::uint64_t page = regions[i].start; page < regions[i].end;
           page += tracer::kPageSize)
        pages.push_back(page);
  }
  return pages;
}

} // namespace cmc::bench
