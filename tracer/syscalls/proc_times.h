#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracer/time/virtual_clock.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// The files of /proc whose text carries the kernel's clock, or counters
// that move with it. The kernel counts them in clock ticks of USER_HZ
// (100 a second) since boot, or seconds with hundredths.
enum class ProcTimes : std::uint8_t {
  kUptime,   // uptime: the time since boot, and the CPUs' idle time
  kStat,     // stat: CPU times, boot time (btime), interrupt counts
  kLoadavg,  // loadavg: load averages, running tasks, the last pid
  kTaskStat, // PID/stat, PID/task/TID/stat: CPU times, start time, faults
  kOther,    // others with times or counters: passed through, listed
};

// The kind of the file at path, relative to the root of procfs ("uptime",
// "12/task/12/stat"); nothing for a file that carries no time.
[[nodiscard]] std::optional<ProcTimes> proc_times_of(std::string_view path);

// The kind of the file open at file, a file of procfs, by its path.
[[nodiscard]] std::optional<ProcTimes> proc_times_of_fd(const UniqueFd &file);
// The whole text of a /proc file, read from its start (the open file's
// offset stays where it was).
[[nodiscard]] std::string whole_text(const UniqueFd &file);

// The text cmc answers for a file of kind (not kOther) on the virtual
// clock: booted VirtualClock::kMonotonicStart before the clocks' start,
// the target started then and ran all the time since (as its CPU-time
// clocks say), no other task, no interrupt, CPU 0. real is the kernel's
// text, whose other fields stay (the lines of /proc/stat, one per CPU;
// the name, state and memory of a task).
[[nodiscard]] std::string virtual_proc_text(ProcTimes kind,
                                            std::string_view real,
                                            const VirtualClock &clock);

} // namespace cmc::tracer
