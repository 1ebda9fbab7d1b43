#pragma once

#include <cstdint>

namespace cmc::tracer {

// An address in the target's memory, of a T there (rr's remote_ptr): cmc
// never dereferences it, it reads and writes the T through ProcessAccess.
template <typename T> class RemotePtr {
public:
  constexpr explicit RemotePtr(std::uint64_t address) : address_(address) {}

  [[nodiscard]] constexpr std::uint64_t address() const { return address_; }
  [[nodiscard]] constexpr bool is_null() const { return address_ == 0; }

private:
  std::uint64_t address_;
};

} // namespace cmc::tracer
