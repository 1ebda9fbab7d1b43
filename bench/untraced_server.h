#pragma once

#include <cstdint>

#include "util/unique_fd.h"

namespace cmc::bench {

// A connection to a server started without cmc on the loopback port,
// tried until it listens (at most 5 s; an invalid fd then).
[[nodiscard]] UniqueFd connect_when_listening(std::uint16_t port);

} // namespace cmc::bench
