#include "util/log.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/cfg/helpers.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace cmc::log {
namespace {

// The sink every module's logger writes to: its lock keeps lines of two
// threads apart. Made once, with spdlog's registry set up first: a logger
// made later takes its pattern and its CMC_LOG level from there.
std::shared_ptr<spdlog::sinks::sink> stderr_sink() {
  spdlog::set_pattern("cmc[%n] %l: %v");
  spdlog::set_level(spdlog::level::warn);
  if (const char *levels = std::getenv("CMC_LOG"))
    spdlog::cfg::helpers::load_levels(levels);
  return std::make_shared<spdlog::sinks::stderr_sink_mt>();
}

} // namespace

spdlog::logger &logger(std::string_view module) {
  static const std::shared_ptr<spdlog::sinks::sink> sink = stderr_sink();
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  const std::string name(module);
  if (const std::shared_ptr<spdlog::logger> made = spdlog::get(name))
    return *made;
  auto made = std::make_shared<spdlog::logger>(name, sink);
  // Gives it the registry's pattern and level, and registers it.
  spdlog::initialize_logger(made);
  return *made;
}

} // namespace cmc::log
