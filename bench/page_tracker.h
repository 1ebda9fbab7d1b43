#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <span>
#include <vector>

#include "decoder/proc_maps.h"
#include "tracer/capture/saved_pages.h"
#include "tracer/process/tracee.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::bench {

// How a restore in place learns which pages of the target a step wrote.
enum class PageTracking {
  // Every saved page read again and compared with its copy.
  kCompare,
  // clear_refs "4", then pagemap's soft-dirty bit; only where the kernel
  // was built with CONFIG_MEM_SOFT_DIRTY.
  kSoftDirty,
  // A userfaultfd of the target's with asynchronous write protection
  // (UFFD_FEATURE_WP_ASYNC: the kernel itself lifts the protection of a
  // page at its first write and notes it), read and armed again with the
  // PAGEMAP_SCAN ioctl of /proc/PID/pagemap (both Linux 6.7).
  kWriteProtect,
};

// The pages of a target's writable memory written since the last arm().
class PageTracker {
public:
  // maps: the target's mappings, of which the writable ones are tracked.
  // For kWriteProtect it makes the userfaultfd in the target, held at a
  // seccomp stop with registers at_call; cmc keeps it (the registration
  // lasts as long as the file) and closes the target's descriptor.
  [[nodiscard]] static Result<PageTracker>
  create(tracer::Tracee &tracee, const user_regs_struct &at_call,
         PageTracking how, std::span<const decoder::Mapping> maps);

  // Tracks writes from now on.
  [[nodiscard]] Result<void> arm();
  // The pages written since arm(), in address order. saved: the pages as
  // they were at arm(), compared with (kCompare: any page in memory now
  // and not saved counts as written).
  [[nodiscard]] Result<std::vector<std::uint64_t>>
  written(const tracer::Tracee &tracee, const tracer::SavedPages &saved);

private:
  PageTracker(PageTracking how, pid_t pid) : how_(how), pid_(pid) {}
  [[nodiscard]] Result<void> watch(tracer::Tracee &tracee,
                                   const user_regs_struct &at_call,
                                   std::span<const decoder::Mapping> maps);
  // One PAGEMAP_SCAN over the writable mappings: with protect, it
  // write-protects the matching pages; pages of the categories all set.
  [[nodiscard]] Result<std::vector<std::uint64_t>>
  scan(std::uint64_t categories, bool protect, bool collect) const;

  PageTracking how_;
  pid_t pid_;
  UniqueFd userfaultfd_;
  UniqueFd pagemap_;
  std::uint64_t start_ = 0; // of the span of the writable mappings
  std::uint64_t end_ = 0;
  std::vector<std::byte> now_; // kCompare's copy of the pages now
};

} // namespace cmc::bench
