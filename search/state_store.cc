#include "search/state_store.h"

#include <algorithm>

#include "util/check.h"

namespace cmc::search {

std::uint32_t StateStore::add(const Fingerprint &fingerprint,
                              std::uint32_t parent, tracer::ActionId action) {
  CMC_CHECK(records_.size() < kCapacity, "state store full");
  CMC_CHECK(parent == kNoParent || parent < records_.size(),
            "parent of a state not stored");
  const auto index = static_cast<std::uint32_t>(records_.size());
  const bool inserted = index_.try_emplace(fingerprint, index).second;
  CMC_CHECK(inserted, "state added twice");
  records_.push_back(StateRecord{fingerprint, parent, action});
  return index;
}

std::vector<tracer::ActionId> StateStore::path_of(std::uint32_t index) const {
  std::vector<tracer::ActionId> path;
  for (std::uint32_t i = index; records_.at(i).parent != kNoParent;
       i = records_[i].parent)
    path.push_back(records_[i].action);
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<Fingerprint>
StateStore::fingerprints_along(std::uint32_t index) const {
  std::vector<Fingerprint> fingerprints;
  for (std::uint32_t i = index; i != kNoParent; i = records_.at(i).parent)
    fingerprints.push_back(records_[i].fingerprint);
  std::reverse(fingerprints.begin(), fingerprints.end());
  return fingerprints;
}

} // namespace cmc::search
