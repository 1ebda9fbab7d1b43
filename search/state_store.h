#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "executor/executor.h"
#include "util/fingerprint.h"

namespace cmc::search {

// One visited state. Its bytes are not kept: stateless replay reaches it
// again from its path, which the parent links spell out.
struct StateRecord {
  Fingerprint fingerprint;
  std::uint32_t parent = 0;
  executor::ActionId action = 0; // of the step from the parent
  bool preempted = false;        // that step's points: in preempt_at_
};
static_assert(sizeof(StateRecord) <= 24, "a state record must stay compact");

// The visited states in insertion order (breadth-first order in the search),
// deduplicated by fingerprint. Index 0 is the initial state.
// Memory per state: the 24-byte record (in a deque: no copies and no
// doubling slack as it grows) plus 4-byte slots of an open-addressing table
// kept at most half full: under 40 bytes, so 10 million states fit in
// 400 MB (bench/visited_set_bench.cc measures it); an audited search
// (whole-process fingerprints kept) 24 bytes more per state; a state whose
// step from its parent was preempted (--preemptions), about 60 more.
class StateStore {
public:
  static constexpr std::uint32_t kNoParent =
      std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t kCapacity = kNoParent;

  [[nodiscard]] std::size_t size() const { return records_.size(); }
  [[nodiscard]] bool contains(const Fingerprint &fingerprint) const {
    return find(fingerprint).has_value();
  }
  // The index of the state with that fingerprint, if visited.
  [[nodiscard]] std::optional<std::uint32_t>
  find(const Fingerprint &fingerprint) const;

  // Adds a state whose fingerprint is not yet known and returns its index.
  // process: its whole-process fingerprint, when the state is a region
  // abstraction that merges are audited against (see process_of).
  std::uint32_t add(const Fingerprint &fingerprint, std::uint32_t parent,
                    const executor::PathStep &action,
                    std::optional<Fingerprint> process = std::nullopt);
  // The whole-process fingerprint given when state index was added, if any.
  [[nodiscard]] std::optional<Fingerprint>
  process_of(std::uint32_t index) const;

  // The actions from the initial state to state index.
  [[nodiscard]] std::vector<executor::PathStep>
  path_of(std::uint32_t index) const;
  // The fingerprints of the states along that path: [0] is the initial
  // state, the last is state index itself.
  [[nodiscard]] std::vector<Fingerprint>
  fingerprints_along(std::uint32_t index) const;

  // Bytes held for the states (records and table), capacity included.
  [[nodiscard]] std::size_t memory_bytes() const;

private:
  static constexpr std::uint32_t kEmpty = kNoParent;
  // The slot holding fingerprint, or the empty slot where it would go.
  [[nodiscard]] std::size_t slot_of(const Fingerprint &fingerprint) const;
  void grow();

  std::deque<StateRecord> records_;
  // Whole-process fingerprints by state index, held only from the first
  // state added with one on (an audit costs 24 bytes more per state; a
  // search without one, nothing).
  std::deque<std::optional<Fingerprint>> processes_;
  // The preemption points of the step to each state whose step was
  // preempted, by index.
  std::unordered_map<std::uint32_t,
                     std::array<std::uint32_t, executor::kMaxPreemptions>>
      preempt_at_;
  std::vector<std::uint32_t> slots_ = std::vector<std::uint32_t>(1024, kEmpty);
};

} // namespace cmc::search
