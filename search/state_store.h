#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "tracer/executor.h"
#include "util/fingerprint.h"

namespace cmc::search {

// One visited state. Its bytes are not kept: stateless replay reaches it
// again from its path, which the parent links spell out.
struct StateRecord {
  Fingerprint fingerprint;
  std::uint32_t parent = 0;
  tracer::ActionId action = 0; // the step from the parent
};
static_assert(sizeof(StateRecord) <= 48, "a state record must stay compact");

// The visited states in insertion order (breadth-first order in the search),
// deduplicated by fingerprint. Index 0 is the initial state.
class StateStore {
public:
  static constexpr std::uint32_t kNoParent =
      std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t kCapacity = kNoParent;

  [[nodiscard]] std::size_t size() const { return records_.size(); }
  [[nodiscard]] bool contains(const Fingerprint &fingerprint) const {
    return index_.contains(fingerprint);
  }

  // Adds a state whose fingerprint is not yet known and returns its index.
  std::uint32_t add(const Fingerprint &fingerprint, std::uint32_t parent,
                    tracer::ActionId action);

  // The actions from the initial state to state index.
  [[nodiscard]] std::vector<tracer::ActionId>
  path_of(std::uint32_t index) const;
  // The fingerprints of the states along that path: [0] is the initial
  // state, the last is state index itself.
  [[nodiscard]] std::vector<Fingerprint>
  fingerprints_along(std::uint32_t index) const;

private:
  std::vector<StateRecord> records_;
  std::unordered_map<Fingerprint, std::uint32_t, FingerprintHash> index_;
};

} // namespace cmc::search
