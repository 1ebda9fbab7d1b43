#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracer/sources.h"
#include "tracer/target_run.h"
#include "util/result.h"

namespace cmc::tracer {

// A system call instruction the target executed, placed in the file it
// was mapped from.
struct ObservedSite {
  std::uint64_t address = 0; // in the target
  std::string path;          // of its mapping: a file, "[vdso]", or ""
  std::uint64_t file_offset = 0;
  std::string vdso_function; // the patched vDSO function it is in, if any
};

// What one observed run showed.
struct ObservedRun {
  std::vector<ObservedSite> sites; // by address
  Sources sources;
  std::string ended; // how the run ended, e.g. "exited with status 0"
};

// Runs spec's program once under the tracer, stopping on every system call
// to see where it was made: until the program ends, or waits for input
// after cmc connected (when it listens) and sent spec's messages in order.
[[nodiscard]] Result<ObservedRun> observe(const TargetSpec &spec);

} // namespace cmc::tracer
