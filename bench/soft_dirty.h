#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <vector>

#include "decoder/proc_maps.h"
#include "util/result.h"

namespace cmc::bench {

// Bits of a /proc/PID/pagemap entry (one 64-bit entry per page).
inline constexpr std::uint64_t kPageSoftDirty = 1ULL << 55;
inline constexpr std::uint64_t kPagePresent = 1ULL << 63;
inline constexpr std::uint64_t kPageSize = 4096;

// Writes "4" to /proc/PID/clear_refs: the soft-dirty bits clear, and the
// kernel write-protects the pages so that the next write to each, by the
// process or by the kernel on its behalf (a read() into it), sets its bit
// again, through a fault.
[[nodiscard]] bool clear_soft_dirty(pid_t pid);

// The addresses of the pages of the writable mappings among mappings whose
// pagemap entry has any of bits set.
[[nodiscard]] Result<std::vector<std::uint64_t>>
writable_pages_with(pid_t pid, std::span<const decoder::Mapping> mappings,
                    std::uint64_t bits);

} // namespace cmc::bench
