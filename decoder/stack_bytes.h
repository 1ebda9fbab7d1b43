#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace cmc::decoder {

// A set of stack bytes as offsets from a stack pointer (negative below
// it): disjoint, sorted, half-open spans.
class StackBytes {
public:
  static constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();

  // [from, to): add it, or take it out.
  void add(std::int64_t from, std::int64_t to);
  void remove(std::int64_t from, std::int64_t to);
  void add(const StackBytes &other);
  // The set moved by delta (offsets from another stack pointer).
  [[nodiscard]] StackBytes shifted(std::int64_t delta) const;
  // Whether the set holds a byte of [from, to).
  [[nodiscard]] bool intersects(std::int64_t from, std::int64_t to) const;
  // The lowest offset in the set.
  [[nodiscard]] std::optional<std::int64_t> lowest() const;
  [[nodiscard]] const std::vector<std::pair<std::int64_t, std::int64_t>> &
  spans() const {
    return spans_;
  }
  bool operator==(const StackBytes &) const = default;

private:
  std::vector<std::pair<std::int64_t, std::int64_t>> spans_;
};

} // namespace cmc::decoder
