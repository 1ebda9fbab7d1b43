#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <vector>

#include "decoder/proc_maps.h"
#include "util/result.h"

namespace cmc::tracer {

// Bits of a /proc/PID/pagemap entry (one 64-bit entry per page).
inline constexpr std::uint64_t kPageSoftDirty = 1ULL << 55;
inline constexpr std::uint64_t kPageSwapped = 1ULL << 62;
inline constexpr std::uint64_t kPagePresent = 1ULL << 63;
inline constexpr std::uint64_t kPageSize = 4096;

// Whether a mapping is writable, and private anonymous memory (a page of
// it never touched reads as zero).
[[nodiscard]] bool writable(const decoder::Mapping &mapping);
[[nodiscard]] bool private_anonymous(const decoder::Mapping &mapping);

// The addresses of the pages of the writable mappings among mappings whose
// pagemap entry has any of bits set.
[[nodiscard]] Result<std::vector<std::uint64_t>>
writable_pages_with(pid_t pid, std::span<const decoder::Mapping> mappings,
                    std::uint64_t bits);

} // namespace cmc::tracer
