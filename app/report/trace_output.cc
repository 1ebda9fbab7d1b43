#include "app/report/trace_output.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/user_error.h"

namespace cmc::app {

void add_trace_options(CLI::App &command, TraceOptions &options) {
  command
      .add_option("-s", options.string_limit,
                  "Show up to N bytes of each buffer and string a system "
                  "call reads or writes (as strace -s; paths are whole)")
      ->option_text("N (default 32)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20U));
  command
      .add_option("-e", options.expression,
                  "Show only these system calls (as strace -e trace=): "
                  "names and classes %file, %desc, %network, %memory, "
                  "%process, %signal, comma-separated; a leading ! negates")
      ->option_text("trace=SET");
  command
      .add_option("-o", options.output,
                  "Write the system calls to FILE instead of stdout")
      ->option_text("FILE");
}

TraceOutput::TraceOutput(const TraceOptions &options, std::FILE *text)
    : text_(text) {
  format_.string_limit = options.string_limit;
  if (!options.expression.empty()) {
    std::string_view set = options.expression;
    if (set.starts_with("trace="))
      set.remove_prefix(6);
    else if (set.find('=') != std::string_view::npos)
      usage(fmt::format("-e {}: only -e trace=SET is supported",
                        options.expression));
    auto filter = tracer::TraceFilter::parse(set);
    if (!filter)
      usage(filter.error().message);
    filter_ = std::move(*filter);
  }
  if (!options.output.empty()) {
    std::FILE *file = std::fopen(options.output.c_str(), "we");
    if (file == nullptr)
      cannot_check(
          fmt::format("-o {}: {}", options.output, std::strerror(errno)));
    file_.reset(file, Closer{});
  }
}

std::FILE *TraceOutput::file() const {
  return file_ != nullptr ? file_.get() : text_;
}

} // namespace cmc::app
