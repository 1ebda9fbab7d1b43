#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace cmc {

// A 128-bit fingerprint of a state (XXH3-128). Two states with equal
// fingerprints are treated as one; collision_probability() says how likely
// that is to be wrong for a search of a given size.
struct Fingerprint {
  std::uint64_t low = 0;
  std::uint64_t high = 0;

  friend bool operator==(const Fingerprint &, const Fingerprint &) = default;
  [[nodiscard]] std::string hex() const;
};

// The fingerprint of a state's bytes; extra is state that has no bytes in
// the target (the virtual clock): it seeds the hash, and extra = 0 gives
// the plain XXH3-128 of bytes.
[[nodiscard]] Fingerprint fingerprint_of(std::span<const std::byte> bytes,
                                         std::uint64_t extra = 0);

// Probability that some two of n distinct states share a fingerprint,
// assuming a uniform 128-bit hash: about n^2 / 2^129.
[[nodiscard]] double collision_probability(std::uint64_t n);

struct FingerprintHash {
  std::size_t operator()(const Fingerprint &f) const noexcept {
    return static_cast<std::size_t>(f.low ^ (f.high * 0x9e3779b97f4a7c15ULL));
  }
};

} // namespace cmc
