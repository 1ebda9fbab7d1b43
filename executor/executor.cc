#include "executor/executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/check.h"
#include "util/signal_name.h"

namespace cmc::executor {

std::string describe_path(std::span<const PathStep> path) {
  std::vector<std::string> steps;
  steps.reserve(path.size());
  for (const PathStep &step : path)
    steps.push_back(step.preemptions() == 0
                        ? fmt::format("{}", step.action)
                        : fmt::format("{} preempted at {}", step.action,
                                      fmt::join(step.points(), ", ")));
  return fmt::format("{}", fmt::join(steps, ", "));
}

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

std::string Fault::violation() const {
  std::string text =
      fmt::format("target {} during step {}", describe(), step + 1);
  if (!last_output.empty())
    text += fmt::format("; it last wrote \"{}\"", last_output);
  text += output_not_kept(output_written, output_dropped);
  return text;
}

std::string output_not_kept(std::uint64_t written, std::uint64_t dropped) {
  if (dropped == 0)
    return "";
  return fmt::format(" ({} of the {} bytes it wrote were not kept: cmc keeps "
                     "the first and last {} KiB)",
                     dropped, written, kOutputKept / 1024);
}

void Executor::set_mask(std::span<const std::size_t> offsets) {
  CMC_CHECK(offsets.empty(), "this executor cannot mask state bytes");
}

} // namespace cmc::executor
