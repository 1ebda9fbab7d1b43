#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cmc::search {

// The bytes of every visited state as the run that recorded it read them,
// kept under --mask-volatile: a later run of the same path that gives
// another fingerprint is then compared byte by byte with that run, not
// only with two new ones (a pid's second byte changes once in 256 runs, so
// two new runs agree with each other, but not with the one recorded).
// Each state is held as its differences from the initial state, which for
// a server are few bytes (its .bss or its main struct barely changes).
class RecordedStates {
public:
  // State index is the number of states added before it; the first is
  // the initial state.
  void add(std::span<const std::byte> bytes);
  [[nodiscard]] std::vector<std::byte> bytes_of(std::uint32_t index) const;
  void clear();

private:
  struct Difference {
    std::uint32_t offset = 0;
    std::byte value{};
  };

  std::vector<std::byte> initial_;
  std::vector<std::vector<Difference>> differences_;
};

} // namespace cmc::search
