#pragma once

#include <fmt/format.h>

#include <string_view>

namespace cmc::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// Per-module levels come from CMC_LOG, e.g. CMC_LOG=tracer=debug,search=info
// or CMC_LOG=debug for every module. The default is warn.
[[nodiscard]] bool enabled(std::string_view module, Level level);

// Writes one line to stderr; safe to call from several threads at once.
void write(std::string_view module, Level level, std::string_view text);

template <typename... Args>
void emit(std::string_view module, Level level,
          fmt::format_string<Args...> format, Args &&...args) {
  if (enabled(module, level))
    write(module, level, fmt::format(format, std::forward<Args>(args)...));
}

} // namespace cmc::log

#define CMC_LOG_DEBUG(module, ...)                                             \
  ::cmc::log::emit(module, ::cmc::log::Level::kDebug, __VA_ARGS__)
#define CMC_LOG_INFO(module, ...)                                              \
  ::cmc::log::emit(module, ::cmc::log::Level::kInfo, __VA_ARGS__)
#define CMC_LOG_WARN(module, ...)                                              \
  ::cmc::log::emit(module, ::cmc::log::Level::kWarn, __VA_ARGS__)
