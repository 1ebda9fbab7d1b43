#pragma once

#include <spdlog/logger.h>

#include <string_view>

namespace cmc::log {

// The logger of a module ("tracer", "search"), made on first use; lines
// go to stderr as "cmc[tracer] debug: text", from any thread. Its level
// comes from CMC_LOG, e.g. CMC_LOG=tracer=debug,search=info or
// CMC_LOG=debug for every module (spdlog's level names); the default is
// warn.
[[nodiscard]] spdlog::logger &logger(std::string_view module);

} // namespace cmc::log

// A line of module at level, formatted only when the level is on: each
// call site finds its logger once, so below the level a call costs a load
// and a compare. module must be the same at every pass of a call site.
#define CMC_LOG_AT(module, level, ...)                                         \
  do {                                                                         \
    static spdlog::logger &cmc_log_logger_ = ::cmc::log::logger(module);       \
    cmc_log_logger_.log(level, __VA_ARGS__);                                   \
  } while (false)
#define CMC_LOG_DEBUG(module, ...)                                             \
  CMC_LOG_AT(module, ::spdlog::level::debug, __VA_ARGS__)
#define CMC_LOG_INFO(module, ...)                                              \
  CMC_LOG_AT(module, ::spdlog::level::info, __VA_ARGS__)
#define CMC_LOG_WARN(module, ...)                                              \
  CMC_LOG_AT(module, ::spdlog::level::warn, __VA_ARGS__)
