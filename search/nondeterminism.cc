#include "search/nondeterminism.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "util/check.h"

namespace cmc::search {
namespace {

constexpr std::size_t kMaxOffsetsNamed = 8;
constexpr const char *kLikelyCauses =
    "(uninitialised memory or an uncontrolled clock?)";

Error fault_on_replay(std::span<const executor::PathStep> prefix,
                      const executor::Fault &fault) {
  if (prefix.empty())
    return Error{
        fmt::format("the target {} before the first step", fault.describe())};
  return Error{fmt::format(
      "nondeterminism: {} could not be reached again: target {} during "
      "step {} of a replay",
      describe_state_after(prefix), fault.describe(), fault.step + 1)};
}

// The names of the files two runs disagree on, "" when none.
std::string differing_files(std::span<const executor::FileDigest> first,
                            std::span<const executor::FileDigest> second) {
  std::vector<std::string> names;
  for (const auto &[one, other] :
       {std::pair(first, second), std::pair(second, first)})
    for (const executor::FileDigest &file : one)
      if (std::find(other.begin(), other.end(), file) == other.end() &&
          std::find(names.begin(), names.end(), file.name) == names.end())
        names.push_back(file.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

std::string name_offset(std::size_t offset,
                        const std::vector<RegionLayout> &layout) {
  for (const RegionLayout &region : layout)
    if (offset >= region.offset && offset < region.offset + region.length)
      return fmt::format("{}+{}", region.name, offset - region.offset);
  return fmt::format("state byte {}", offset);
}

std::vector<std::size_t> differing_offsets(std::span<const std::byte> first,
                                           std::span<const std::byte> second) {
  std::vector<std::size_t> offsets;
  for (std::size_t i = 0; i < std::min(first.size(), second.size()); ++i)
    if (first[i] != second[i])
      offsets.push_back(i);
  return offsets;
}

std::string describe_state_after(std::span<const executor::PathStep> prefix) {
  if (prefix.empty())
    return "the initial state";
  return fmt::format("the state after actions [{}]",
                     executor::describe_path(prefix));
}

std::string describe_locations(std::span<const decoder::Location> locations) {
  std::vector<std::string> named;
  for (std::size_t i = 0; i < std::min(locations.size(), kMaxOffsetsNamed); ++i)
    named.push_back(locations[i].describe());
  if (locations.size() > kMaxOffsetsNamed)
    named.push_back(
        fmt::format("{} more", locations.size() - kMaxOffsetsNamed));
  return fmt::format("{}", fmt::join(named, ", "));
}

std::string describe_differences(std::span<const std::byte> first,
                                 std::span<const std::byte> second,
                                 const std::vector<RegionLayout> &layout) {
  const std::vector<std::size_t> differing = differing_offsets(first, second);
  std::vector<std::string> named;
  for (std::size_t i = 0; i < std::min(differing.size(), kMaxOffsetsNamed); ++i)
    named.push_back(name_offset(differing[i], layout));
  if (differing.size() > kMaxOffsetsNamed)
    named.push_back(
        fmt::format("{} more", differing.size() - kMaxOffsetsNamed));
  if (first.size() != second.size())
    named.push_back(fmt::format("the state size ({} vs {} bytes)", first.size(),
                                second.size()));
  return fmt::format("{}", fmt::join(named, ", "));
}

Result<executor::Observation>
replay_twice(executor::Executor &executor,
             std::span<const executor::PathStep> prefix,
             const std::vector<RegionLayout> &layout, Differing *differing) {
  Result<executor::Observation> first = executor.run(prefix);
  if (!first)
    return first.error();
  Result<executor::Observation> second = executor.run(prefix);
  if (!second)
    return second.error();
  for (const auto *run : {&*first, &*second}) {
    if (run->fault)
      return fault_on_replay(prefix, *run->fault);
    CMC_CHECK(run->fingerprints.size() == prefix.size() + 1,
              "executor returned one fingerprint per state");
  }
  const std::string offsets =
      describe_differences(first->after, second->after, layout);
  if (!offsets.empty() && differing != nullptr)
    differing->offsets = differing_offsets(first->after, second->after);
  if (!offsets.empty())
    return Error{fmt::format("nondeterminism: {} differs between two runs at "
                             "{} {}",
                             describe_state_after(prefix), offsets,
                             kLikelyCauses)};
  const std::string files =
      differing_files(first->files_after, second->files_after);
  if (!files.empty())
    return Error{fmt::format("nondeterminism: {} differs between two runs in "
                             "the file {} (written from a clock, or left by "
                             "an earlier run in a path all runs share?)",
                             describe_state_after(prefix), files)};
  if (first->fingerprints.back() == second->fingerprints.back())
    return first;
  if (!first->images.empty() && !second->images.empty()) {
    std::vector<decoder::Location> locations =
        decoder::differences(first->images.back(), second->images.back());
    if (!locations.empty()) {
      const std::string named = describe_locations(locations);
      if (differing != nullptr)
        differing->locations = std::move(locations);
      return Error{fmt::format("nondeterminism: {} differs between two runs "
                               "at {} {}",
                               describe_state_after(prefix), named,
                               kLikelyCauses)};
    }
  }
  return Error{fmt::format(
      "nondeterminism: {} has equal bytes but different fingerprints in two "
      "runs (state cmc adds beyond what it reads?)",
      describe_state_after(prefix))};
}

std::string restore_differs(const executor::Observation &restored,
                            const executor::Observation &replay,
                            const std::vector<RegionLayout> &layout) {
  if (replay.fault.has_value() != restored.fault.has_value() ||
      (replay.fault && replay.fault->describe() != restored.fault->describe()))
    return "how the last step ended";
  if (!restored.fault &&
      replay.fingerprints.back() != restored.fingerprints.back()) {
    std::string bytes =
        describe_differences(restored.after, replay.after, layout);
    return bytes.empty()
               ? "bytes outside the regions (the whole-process fingerprint)"
               : bytes;
  }
  if (replay.received.back() != restored.received.back())
    return "the replies of the last step";
  return "";
}

} // namespace cmc::search
