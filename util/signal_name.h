#pragma once

#include <string>

namespace cmc {

// "SIGSEGV" for SIGSEGV, "signal 77" where the number has no name.
[[nodiscard]] std::string signal_name(int signal);

} // namespace cmc
