#include "app/target_options.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "util/escape.h"
#include "util/user_error.h"

namespace cmc::app {

std::string resolve_program(const std::string &program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) != 0)
      throw UserError(ExitCode::kCannotCheck,
                      fmt::format("program {} does not exist or is not "
                                  "executable",
                                  program));
    return program;
  }
  const char *path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    const std::string candidate =
        fmt::format("{}/{}", dirs.substr(0, colon), program);
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos)
      break;
    dirs.remove_prefix(colon + 1);
  }
  throw UserError(ExitCode::kCannotCheck,
                  fmt::format("program {} is not in PATH", program));
}

std::vector<std::string>
decode_messages(const std::vector<std::string> &texts) {
  std::vector<std::string> messages;
  for (const std::string &text : texts) {
    auto decoded = decode_escapes(text);
    if (!decoded)
      throw UserError(ExitCode::kUsage,
                      "bad --message " + decoded.error().message);
    messages.push_back(std::move(*decoded));
  }
  return messages;
}

} // namespace cmc::app
