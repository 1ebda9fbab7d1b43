#include "util/fingerprint.h"

#include <xxhash.h>

#include <cmath>

#include <fmt/format.h>

namespace cmc {

std::string Fingerprint::hex() const {
  return fmt::format("{:016x}{:016x}", high, low);
}

Fingerprint fingerprint_of(std::span<const std::byte> bytes,
                           std::uint64_t extra) {
  const auto hash = XXH3_128bits_withSeed(bytes.data(), bytes.size(), extra);
  return Fingerprint{hash.low64, hash.high64};
}

double collision_probability(std::uint64_t n) {
  const auto states = static_cast<double>(n);
  return states * states / std::ldexp(1.0, 129);
}

} // namespace cmc
