#include "executor/sources.h"

#include <fmt/format.h>

#include "util/check.h"

namespace cmc::executor {
namespace {

constexpr std::array<SourceInfo, static_cast<std::size_t>(Source::kCount)>
    kSources{{
        {"clock_gettime", "virtual clock", true},
        {"gettimeofday", "virtual clock", true},
        {"time", "virtual clock", true},
        {"clock_getres", "answered 1 ns", true},
        {"getcpu", "answered CPU 0, node 0", true},
        {"timed wait", "timeout fires on a tick past its deadline", true},
        {"nanosleep", "wakes on a tick past its deadline", true},
        {"timerfd", "expires on a tick past its deadline", true},
        {"getrandom", "seeded generator (--seed)", true},
        {"/dev/urandom", "seeded generator (--seed)", true},
        {"AT_RANDOM", "overwritten from the seed at exec", true},
        {"rdtsc", "trapped (PR_SET_TSC), virtual clock", true},
        {"rdtsc",
         "sites patched with int3 (PR_SET_TSC does not trap here), "
         "virtual clock",
         true},
        {"rdtsc",
         "sites patched with int3 before the program's entry, where "
         "PR_SET_TSC is set, virtual clock",
         true},
        {"rdtsc",
         "PR_SET_TSC does not trap here and code cmc could not scan "
         "is mapped: its rdtsc sites, if any, run unpatched",
         false},
        {"rseq", "refused with ENOSYS", true},
        {"io_uring_setup", "refused with ENOSYS", true},
        {"rdrand/rdseed",
         "no CPUID faulting here to hide them: the CPU's random numbers",
         false},
        {"times/getrusage/sysinfo", "passed through to the kernel", false},
        {"cpuid",
         "trapped (CPUID faulting), a fixed CPU 0 without rdrand, rdseed, "
         "rdpid",
         true},
        {"cpuid",
         "no CPUID faulting here: the host's CPU, its APIC id and features "
         "(rdrand, rdseed, rdpid)",
         false},
        {"rdpid", "no CPUID faulting here to hide it: the CPU it runs on",
         false},
        {"sched_getaffinity", "answered CPU 0 only", true},
        {"/proc/uptime, /proc/stat, /proc/loadavg",
         "answered from the virtual clock", true},
        {"/proc/PID/stat",
         "times answered from the virtual clock, fault counts and CPU 0", true},
        {"/proc files with times or counters",
         "passed through to the kernel (schedstat, status, io, "
         "interrupts, diskstats, meminfo, net/dev...)",
         false},
        {"readv of /proc times", "passed through to the kernel", false},
        {"netlink route replies",
         "time stamps and counters zeroed (IFA_CACHEINFO, IFLA_STATS...)",
         true},
        {"TCP_INFO",
         "round-trip times, timers, rates and counters zeroed (state, "
         "options and segment sizes kept)",
         true},
        {"alarm/setitimer", "fires on a tick past its deadline", true},
        {"timer_create", "fires on a tick past its deadline", true},
    }};

// The sites of an uncontrolled instruction the report names at most.
constexpr std::size_t kSitesNamed = 4;

} // namespace

const SourceInfo &source_info(Source source) {
  const auto row = static_cast<std::size_t>(source);
  CMC_CHECK(row < kSources.size(), "unknown source");
  return kSources[row];
}

std::string control_text(Source source, const Sources &sources) {
  if (source == Source::kRdtscPatched)
    return fmt::format("patched {} sites with int3 (PR_SET_TSC does not "
                       "trap here), virtual clock",
                       sources.tsc_sites());
  if (source == Source::kRdtscBeforeEntry)
    return fmt::format("patched {} sites with int3 before the program's "
                       "entry (ld.so and the constructors run before "
                       "PR_SET_TSC is set there), virtual clock",
                       sources.tsc_sites());
  std::string text(source_info(source).control);
  const std::set<std::string> &sites = sources.sites(source);
  if (sites.empty())
    return text;
  std::size_t named = 0;
  for (const std::string &site : sites) {
    if (named == kSitesNamed)
      break;
    text += fmt::format("{}{}", named++ == 0 ? ", at " : ", ", site);
  }
  if (sites.size() > kSitesNamed)
    text += fmt::format(" and {} more", sites.size() - kSitesNamed);
  return text;
}

} // namespace cmc::executor
