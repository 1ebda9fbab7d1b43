#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace cmc::decoder {

// The value of entry type (AT_ENTRY, AT_RANDOM, ...) in the raw bytes of
// /proc/PID/auxv (pairs of 64-bit words, ending with AT_NULL).
[[nodiscard]] std::optional<std::uint64_t>
auxv_value(std::span<const std::byte> raw, std::uint64_t type);

} // namespace cmc::decoder
