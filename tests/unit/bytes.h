#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace cmc::testing {

// bytes({0x0f, 0x05}): byte strings written as lists of values.
inline std::vector<std::byte> bytes(std::initializer_list<unsigned> values) {
  std::vector<std::byte> out;
  for (const unsigned value : values)
    out.push_back(static_cast<std::byte>(value));
  return out;
}

} // namespace cmc::testing
