#include "search/state_store.h"

#include <algorithm>

#include "util/check.h"

namespace cmc::search {

std::size_t StateStore::slot_of(const Fingerprint &fingerprint) const {
  // Fingerprints are uniform hashes already: their low bits index the
  // table directly. Linear probing; the table is never more than half full.
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = static_cast<std::size_t>(fingerprint.low) & mask;
  while (slots_[slot] != kEmpty &&
         records_[slots_[slot]].fingerprint != fingerprint)
    slot = (slot + 1) & mask;
  return slot;
}

std::optional<std::uint32_t>
StateStore::find(const Fingerprint &fingerprint) const {
  const std::uint32_t index = slots_[slot_of(fingerprint)];
  if (index == kEmpty)
    return std::nullopt;
  return index;
}

void StateStore::grow() {
  slots_.assign(slots_.size() * 2, kEmpty);
  for (std::size_t i = 0; i < records_.size(); ++i)
    slots_[slot_of(records_[i].fingerprint)] = static_cast<std::uint32_t>(i);
}

std::uint32_t StateStore::add(const Fingerprint &fingerprint,
                              std::uint32_t parent,
                              const executor::PathStep &action,
                              std::optional<Fingerprint> process) {
  CMC_CHECK(records_.size() < kCapacity, "state store full");
  CMC_CHECK(parent == kNoParent || parent < records_.size(),
            "parent of a state not stored");
  if (2 * (records_.size() + 1) > slots_.size())
    grow();
  const std::size_t slot = slot_of(fingerprint);
  CMC_CHECK(slots_[slot] == kEmpty, "state added twice");
  const auto index = static_cast<std::uint32_t>(records_.size());
  records_.push_back(StateRecord{fingerprint, parent, action.action,
                                 action.preemptions() != 0});
  if (action.preemptions() != 0)
    preempt_at_.emplace(index, action.preempt_at);
  slots_[slot] = index;
  if (process || !processes_.empty()) {
    processes_.resize(index);
    processes_.push_back(process);
  }
  return index;
}

std::optional<Fingerprint> StateStore::process_of(std::uint32_t index) const {
  CMC_CHECK(index < records_.size(), "process of a state not stored");
  return index < processes_.size() ? processes_[index] : std::nullopt;
}

std::size_t StateStore::memory_bytes() const {
  // A node of the map: its entry, the next pointer and the cached hash;
  // the buckets.
  constexpr std::size_t kNode =
      sizeof(decltype(preempt_at_)::value_type) + 2 * sizeof(void *);
  return records_.size() * sizeof(StateRecord) +
         processes_.size() * sizeof(std::optional<Fingerprint>) +
         slots_.capacity() * sizeof(std::uint32_t) +
         preempt_at_.size() * kNode +
         preempt_at_.bucket_count() * sizeof(void *);
}

std::vector<executor::PathStep> StateStore::path_of(std::uint32_t index) const {
  std::vector<executor::PathStep> path;
  for (std::uint32_t i = index; records_.at(i).parent != kNoParent;
       i = records_[i].parent) {
    executor::PathStep &step = path.emplace_back(records_[i].action);
    if (records_[i].preempted)
      step.preempt_at = preempt_at_.at(i);
  }
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
