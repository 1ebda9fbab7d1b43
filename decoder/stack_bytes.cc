#include "decoder/stack_bytes.h"

#include <algorithm>

namespace cmc::decoder {

void StackBytes::add(std::int64_t from, std::int64_t to) {
  if (from >= to)
    return;
  std::vector<std::pair<std::int64_t, std::int64_t>> merged;
  merged.reserve(spans_.size() + 1);
  for (const auto &span : spans_) {
    if (span.second < from || span.first > to) {
      merged.push_back(span);
      continue;
    }
    from = std::min(from, span.first);
    to = std::max(to, span.second);
  }
  merged.emplace_back(from, to);
  std::sort(merged.begin(), merged.end());
  spans_ = std::move(merged);
}

void StackBytes::remove(std::int64_t from, std::int64_t to) {
  if (from >= to)
    return;
  std::vector<std::pair<std::int64_t, std::int64_t>> left;
  left.reserve(spans_.size() + 1);
  for (const auto &span : spans_) {
    if (span.second <= from || span.first >= to) {
      left.push_back(span);
      continue;
    }
    if (span.first < from)
      left.emplace_back(span.first, from);
    if (span.second > to)
      left.emplace_back(to, span.second);
  }
  spans_ = std::move(left);
}

void StackBytes::add(const StackBytes &other) {
  for (const auto &[from, to] : other.spans_)
    add(from, to);
}

StackBytes StackBytes::shifted(std::int64_t delta) const {
  StackBytes moved;
  for (const auto &[from, to] : spans_)
    moved.spans_.emplace_back(from + delta, to == kEnd ? kEnd : to + delta);
  return moved;
}

bool StackBytes::intersects(std::int64_t from, std::int64_t to) const {
  const auto after = std::upper_bound(
      spans_.begin(), spans_.end(), from,
      [](std::int64_t at, const auto &span) { return at < span.second; });
  return after != spans_.end() && after->first < to;
}

std::optional<std::int64_t> StackBytes::lowest() const {
  if (spans_.empty())
    return std::nullopt;
  return spans_.front().first;
}

} // namespace cmc::decoder
