#include "tracer/executor.h"

#include <fmt/format.h>

#include "tracer/wait_status.h"

namespace cmc::tracer {

std::string Fault::describe() const {
  switch (kind) {
  case Kind::kSignal:
    return "killed by " + signal_name(code);
  case Kind::kExit:
    return fmt::format("exited with status {}", code);
  case Kind::kHang:
    return "hung (it did not wait for input again within the step timeout)";
  case Kind::kDeadlock:
    return "deadlocked (every thread waits on a futex, which no thread is "
           "left to wake)";
  }
  return "failed";
}

std::string signal_name(int signal) {
  const char *abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev)
                           : fmt::format("signal {}", signal);
}

} // namespace cmc::tracer
