#include "tracer/syscalls/proc_times.h"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace cmc::tracer {
namespace {

// USER_HZ: the unit of the clock ticks /proc shows.
constexpr std::int64_t kTicksPerSecond = 100;

std::int64_t ticks(std::chrono::nanoseconds time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time).count() /
         (1000 / kTicksPerSecond);
}

// The virtual time since boot.
std::chrono::nanoseconds uptime(const VirtualClock &clock) {
  return VirtualClock::kMonotonicStart + clock.elapsed();
}

bool is_number(std::string_view word) {
  return !word.empty() &&
         std::ranges::all_of(word, [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const auto begin = line.find_first_not_of(' ');
    if (begin == std::string_view::npos)
      break;
    line.remove_prefix(begin);
    const auto end = std::min(line.find(' '), line.size());
    words.push_back(line.substr(0, end));
    line.remove_prefix(end);
  }
  return words;
}

std::string uptime_text(const VirtualClock &clock) {
  const std::int64_t up = ticks(uptime(clock));
  return fmt::format("{}.{:02} 0.00\n", up / kTicksPerSecond,
                     up % kTicksPerSecond);
}

// One line of /proc/stat: "cpu" and "cpuN" lines idle since boot, the boot
// time of the virtual clock, one process running, every other count zero.
std::string stat_line(std::string_view line, const VirtualClock &clock,
                      std::size_t cpus) {
  const std::vector<std::string_view> words = words_of(line);
  if (words.empty())
    return {};
  const std::string_view name = words.front();
  std::string text(name);
  if (name == "btime") {
    const auto booted =
        VirtualClock::kRealtimeStart - VirtualClock::kMonotonicStart;
    return fmt::format("btime {}\n", booted.count());
  }
  const bool cpu = name.starts_with("cpu");
  // user nice system idle iowait irq softirq steal guest guest_nice
  constexpr std::size_t kIdle = 4;
  for (std::size_t k = 1; k < words.size(); ++k) {
    std::int64_t value = 0;
    if (cpu && k == kIdle)
      value = ticks(uptime(clock)) *
              static_cast<std::int64_t>(name == "cpu" ? cpus : 1);
    else if (name == "processes" || name == "procs_running")
      value = 1;
    text += fmt::format(" {}", is_number(words[k]) ? value : 0);
  }
  // The aggregate line has two spaces after its name.
  if (name == "cpu")
    text.insert(3, " ");
  return text + "\n";
}

std::string stat_text(std::string_view real, const VirtualClock &clock) {
  std::size_t cpus = 0;
  std::vector<std::string_view> lines;
  while (!real.empty()) {
    const auto end = std::min(real.find('\n'), real.size());
    lines.push_back(real.substr(0, end));
    real.remove_prefix(std::min(end + 1, real.size()));
    if (lines.back().starts_with("cpu") && !lines.back().starts_with("cpu "))
      ++cpus;
  }
  std::string text;
  for (const std::string_view line : lines)
    text += stat_line(line, clock, cpus);
  return text;
}

// Fields of PID/stat (proc(5), counted from 1) that carry time or counts
// of events: fault counts, CPU times, start time, the CPU last run on,
// block I/O delay and guest times.
enum TaskField : std::size_t {
  kMinorFaults = 10,
  kUserTime = 14,
  kChildSystemTime = 17,
  kStartTime = 22,
  kProcessor = 39,
  kBlockDelay = 42,
  kChildGuestTime = 44,
};

std::string task_stat_text(std::string_view real, const VirtualClock &clock) {
  // The name (field 2) is in parentheses and may hold spaces and ')'.
  const auto close = real.rfind(')');
  if (close == std::string_view::npos)
    return std::string(real);
  std::string text(real.substr(0, close + 1));
  const std::vector<std::string_view> words =
      words_of(real.substr(close + 1, real.find('\n', close) - close - 1));
  for (std::size_t k = 0; k < words.size(); ++k) {
    const std::size_t field = k + 3;
    std::string word(words[k]);
    if (field == kUserTime)
      word = std::to_string(ticks(clock.elapsed()));
    else if (field == kStartTime)
      word = std::to_string(ticks(VirtualClock::kMonotonicStart));
    else if ((field >= kMinorFaults && field <= kChildSystemTime) ||
             field == kProcessor ||
             (field >= kBlockDelay && field <= kChildGuestTime))
      word = "0";
    text += " " + word;
  }
  return text + "\n";
}

} // namespace

std::optional<ProcTimes> proc_times_of(std::string_view path) {
  if (path == "uptime")
    return ProcTimes::kUptime;
  if (path == "stat")
    return ProcTimes::kStat;
  if (path == "loadavg")
    return ProcTimes::kLoadavg;
  static constexpr std::array<std::string_view, 14> kOthers{
      "schedstat",       "interrupts",  "softirqs",     "diskstats",
      "vmstat",          "net/dev",     "net/snmp",     "net/netstat",
      "timer_list",      "meminfo",     "pressure/cpu", "pressure/io",
      "pressure/memory", "net/sockstat"};
  if (std::ranges::find(kOthers, path) != kOthers.end())
    return ProcTimes::kOther;
  // PID/LEAF or PID/task/TID/LEAF.
  const auto slash = path.find('/');
  if (slash == std::string_view::npos || !is_number(path.substr(0, slash)))
    return std::nullopt;
  std::string_view leaf = path.substr(slash + 1);
  if (leaf.starts_with("task/")) {
    const auto next = leaf.find('/', 5);
    if (next == std::string_view::npos || !is_number(leaf.substr(5, next - 5)))
      return std::nullopt;
    leaf = leaf.substr(next + 1);
  }
  if (leaf == "stat")
    return ProcTimes::kTaskStat;
  static constexpr std::array<std::string_view, 5> kTaskOthers{
      "schedstat", "sched", "io", "status", "net/dev"};
  if (std::ranges::find(kTaskOthers, leaf) != kTaskOthers.end())
    return ProcTimes::kOther;
  return std::nullopt;
}

std::optional<ProcTimes> proc_times_of_fd(const UniqueFd &file) {
  struct statfs system {};
  if (fstatfs(file.get(), &system) != 0 || system.f_type != PROC_SUPER_MAGIC)
    return std::nullopt;
  std::error_code error;
  const std::string path =
      std::filesystem::read_symlink(fmt::format("/proc/self/fd/{}", file.get()),
                                    error)
          .string();
  constexpr std::string_view kRoot = "/proc/";
  if (error || !path.starts_with(kRoot))
    return std::nullopt;
  return proc_times_of(std::string_view(path).substr(kRoot.size()));
}

std::string whole_text(const UniqueFd &file) {
  std::string text;
  std::array<char, 4096> chunk{};
  while (true) {
    const ssize_t got = pread(file.get(), chunk.data(), chunk.size(),
                              static_cast<off_t>(text.size()));
    if (got <= 0)
      return text;
    text.append(chunk.data(), static_cast<std::size_t>(got));
  }
}

std::string virtual_proc_text(ProcTimes kind, std::string_view real,
                              const VirtualClock &clock) {
  switch (kind) {
  case ProcTimes::kUptime:
    return uptime_text(clock);
  case ProcTimes::kStat:
    return stat_text(real, clock);
  case ProcTimes::kLoadavg:
    return "0.00 0.00 0.00 1/1 1\n";
  case ProcTimes::kTaskStat:
    return task_stat_text(real, clock);
  case ProcTimes::kOther:
    break;
  }
  return std::string(real);
}

} // namespace cmc::tracer
