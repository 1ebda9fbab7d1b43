#pragma once

#include <string>
#include <vector>

namespace cmc::app {

// The options that name a target and what to send it, shared by the
// commands that run one. Each throws UserError for bad input.

// PROGRAM as execvp would find it: a path with a slash as it is, a bare
// name through PATH.
[[nodiscard]] std::string resolve_program(const std::string &program);

// The --message texts with their C escapes decoded.
[[nodiscard]] std::vector<std::string>
decode_messages(const std::vector<std::string> &texts);

} // namespace cmc::app
