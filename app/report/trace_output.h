#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "decoder/syscall_format.h"
#include "tracer/syscalls/syscall_table.h"
#include "tracer/syscalls/syscall_trace.h"

namespace cmc::app {

// How replay and explore show the target's system calls: strace's -s, -e
// trace= and -o.
struct TraceOptions {
  std::size_t string_limit = 32; // bytes of a buffer shown
  std::string expression;        // "trace=accept4,read", or ""
  std::string output;            // a file for the calls, or "": stdout
};

void add_trace_options(CLI::App &command, TraceOptions &options);

// Which calls are shown, how, and where to.
class TraceOutput {
public:
  // Every call, on stdout.
  TraceOutput() = default;
  // A run's text goes to text (stdout, or stderr when the JSON report
  // takes stdout), its calls to the -o file instead when there is one.
  // Throws UserError: exit 2 for an -e that names no call or class, 3 for
  // an -o file that cannot be written.
  explicit TraceOutput(const TraceOptions &options, std::FILE *text = stdout);

  [[nodiscard]] decoder::FormatOptions format() const { return format_; }
  [[nodiscard]] bool shows(const tracer::TracedCall &call) const {
    return filter_.shows(call.number);
  }
  // Where the calls go: the -o file, else text().
  [[nodiscard]] std::FILE *file() const;
  // Where the rest of the text goes.
  [[nodiscard]] std::FILE *text() const { return text_; }

private:
  struct Closer {
    void operator()(std::FILE *file) const { std::fclose(file); }
  };

  decoder::FormatOptions format_;
  tracer::TraceFilter filter_;
  std::shared_ptr<std::FILE> file_;
  std::FILE *text_ = stdout;
};

} // namespace cmc::app
