#pragma once

#include <span>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "search/property.h"
#include "util/result.h"

namespace cmc::search {

// "the initial state" or "the state after actions [1, 0]" (action indexes).
[[nodiscard]] std::string
describe_state_after(std::span<const executor::PathStep> prefix);

// The state byte at offset, named by its region: "cmc_state+1".
[[nodiscard]] std::string name_offset(std::size_t offset,
                                      const std::vector<RegionLayout> &layout);

// The offsets where two byte strings differ, named by region:
// "cmc_state+0, cmc_state+1". Empty when they are equal.
[[nodiscard]] std::string
describe_differences(std::span<const std::byte> first,
                     std::span<const std::byte> second,
                     const std::vector<RegionLayout> &layout);

// The offsets of the bytes both strings have where they differ.
[[nodiscard]] std::vector<std::size_t>
differing_offsets(std::span<const std::byte> first,
                  std::span<const std::byte> second);

// Whole-process locations, named: "heap chunk 12 (64 B)+8, fd 7+8" (at
// most 8, then how many more).
[[nodiscard]] std::string
describe_locations(std::span<const decoder::Location> locations);

// The bytes that differ between two runs of one path, by what names them.
struct Differing {
  std::vector<std::size_t> offsets;         // region bytes
  std::vector<decoder::Location> locations; // whole-process bytes
  [[nodiscard]] bool empty() const {
    return offsets.empty() && locations.empty();
  }
};

// Runs prefix twice on executor. Returns the first observation when both
// runs reach the same state; otherwise an Error "nondeterminism: ..." that
// names the differing region offsets, or the whole-process locations when
// the executor keeps images (Executor::keep_images), or the executor's own
// Error. When bytes differ and differing is given, *differing gets them
// (of the region bytes both states have); else it is left empty.
[[nodiscard]] Result<executor::Observation> replay_twice(
    executor::Executor &executor, std::span<const executor::PathStep> prefix,
    const std::vector<RegionLayout> &layout, Differing *differing = nullptr);

// What differs between a run restored from a snapshot and a replay of the
// same path: "how the last step ended", the region bytes (named by
// layout), the whole-process fingerprint, the replies; "" when nothing.
[[nodiscard]] std::string
restore_differs(const executor::Observation &restored,
                const executor::Observation &replay,
                const std::vector<RegionLayout> &layout);

} // namespace cmc::search
