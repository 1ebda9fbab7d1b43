#include "util/signal_name.h"

#include <cstring>

#include <fmt/format.h>

namespace cmc {

std::string signal_name(int signal) {
  const char *abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev)
                           : fmt::format("signal {}", signal);
}

} // namespace cmc
