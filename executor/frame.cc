#include "executor/frame.h"

#include <string_view>

#include <fmt/format.h>

namespace cmc::executor {
namespace {

std::string_view basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string describe(const Frame &frame) {
  std::string text =
      frame.function.empty()
          ? fmt::format("?? {:#x}", frame.pc)
          : fmt::format("{}+{:#x}", frame.function, frame.offset);
  if (!frame.file.empty())
    return fmt::format("{} ({}:{})", text, basename(frame.file), frame.line);
  if (!frame.module.empty())
    return fmt::format("{} ({})", text, basename(frame.module));
  return text;
}

} // namespace cmc::executor
