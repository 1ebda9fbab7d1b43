#include "search/state_graph.h"

#include "search/nondeterminism.h"

namespace cmc::search {

std::vector<ChangedByte> changed_bytes(std::span<const std::byte> before,
                                       std::span<const std::byte> after) {
  std::vector<ChangedByte> changes;
  for (const std::size_t offset : differing_offsets(before, after))
    changes.push_back({offset, static_cast<std::uint8_t>(before[offset]),
                       static_cast<std::uint8_t>(after[offset])});
  return changes;
}

} // namespace cmc::search
