#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "executor/executor.h"
#include "util/fingerprint.h"

namespace cmc::search {

// What a path allows and what it adds to a state: the rules the
// breadth-first search and the random walks share.

// Whether action is a message of [0, once_actions) (--once) that prefix
// took already: it is then not taken again.
[[nodiscard]] bool taken_before(std::span<const executor::PathStep> prefix,
                                executor::ActionId action,
                                std::size_t once_actions);

// How many steps of path are the tick (none without one).
[[nodiscard]] std::size_t ticks_in(std::span<const executor::PathStep> path,
                                   std::optional<executor::ActionId> tick);

// The state the search sees after prefix, whose executor fingerprint is
// given. With --once the set of messages taken is part of it (in any
// order), since it decides which steps are left; with StateKind::kPath
// the path itself is.
[[nodiscard]] Fingerprint
state_identity(const Fingerprint &fingerprint,
               std::span<const executor::PathStep> prefix,
               std::size_t once_actions, executor::StateKind state);

} // namespace cmc::search
