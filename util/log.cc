#include "util/log.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace cmc::log {
namespace {

struct Levels {
  Level fallback = Level::kWarn;
  std::map<std::string, Level, std::less<>> per_module;
};

Level parse_level(std::string_view text) {
  if (text == "error")
    return Level::kError;
  if (text == "info")
    return Level::kInfo;
  if (text == "debug")
    return Level::kDebug;
  return Level::kWarn;
}

Levels read_levels() {
  Levels levels;
  const char *env = std::getenv("CMC_LOG");
  std::string_view rest = env != nullptr ? env : "";
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    const auto equals = item.find('=');
    if (equals == std::string_view::npos)
      levels.fallback = parse_level(item);
    else
      levels.per_module[std::string(item.substr(0, equals))] =
          parse_level(item.substr(equals + 1));
  }
  return levels;
}

const Levels &levels() {
  static const Levels parsed = read_levels();
  return parsed;
}

std::string_view level_name(Level level) {
  switch (level) {
  case Level::kError:
    return "error";
  case Level::kWarn:
    return "warn";
  case Level::kInfo:
    return "info";
  case Level::kDebug:
    return "debug";
  }
  return "?";
}

} // namespace

bool enabled(std::string_view module, Level level) {
  const Levels &all = levels();
  const auto it = all.per_module.find(module);
  const Level limit = it != all.per_module.end() ? it->second : all.fallback;
  return level <= limit;
}

void write(std::string_view module, Level level, std::string_view text) {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  std::fprintf(
      stderr, "cmc[%.*s] %.*s: %.*s\n", static_cast<int>(module.size()),
      module.data(), static_cast<int>(level_name(level).size()),
      level_name(level).data(), static_cast<int>(text.size()), text.data());
}

} // namespace cmc::log
