#include "search/path_rules.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cmc::search {

using executor::PathStep;

bool taken_before(std::span<const PathStep> prefix, executor::ActionId action,
                  std::size_t once_actions) {
  return action < once_actions &&
         std::ranges::any_of(prefix, [&](const PathStep &step) {
           return step.action == action;
         });
}

std::size_t ticks_in(std::span<const PathStep> path,
                     std::optional<executor::ActionId> tick) {
  if (!tick)
    return 0;
  return static_cast<std::size_t>(std::ranges::count_if(
      path, [&](const PathStep &step) { return step.action == *tick; }));
}

Fingerprint state_identity(const Fingerprint &fingerprint,
                           std::span<const PathStep> prefix,
                           std::size_t once_actions,
                           executor::StateKind state) {
  const bool path = state == executor::StateKind::kPath;
  if (once_actions == 0 && !path)
    return fingerprint;
  std::vector<std::uint64_t> words{fingerprint.low, fingerprint.high};
  for (const PathStep &step : prefix) {
    if (path)
      words.insert(words.end(), step.preempt_at.begin(), step.preempt_at.end());
    if (path || step.action < once_actions)
      words.push_back(step.action);
  }
  if (!path)
    std::sort(words.begin() + 2, words.end());
  return fingerprint_of(std::as_bytes(std::span(words)));
}

} // namespace cmc::search
