#include "search/recorded_states.h"

#include "util/check.h"

namespace cmc::search {

void RecordedStates::add(std::span<const std::byte> bytes) {
  if (differences_.empty())
    initial_.assign(bytes.begin(), bytes.end());
  CMC_CHECK(bytes.size() == initial_.size(), "every state has one size");
  std::vector<Difference> &differences = differences_.emplace_back();
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] != initial_[i])
      differences.push_back({static_cast<std::uint32_t>(i), bytes[i]});
  differences.shrink_to_fit();
}

std::vector<std::byte> RecordedStates::bytes_of(std::uint32_t index) const {
  std::vector<std::byte> bytes = initial_;
  for (const Difference &difference : differences_.at(index))
    bytes[difference.offset] = difference.value;
  return bytes;
}

void RecordedStates::clear() {
  initial_.clear();
  differences_.clear();
}

} // namespace cmc::search
