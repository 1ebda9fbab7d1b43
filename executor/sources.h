#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace cmc::executor {

// The sources of time and randomness a target can reach, each a row of
// source_table(). A row names what the target used and how cmc answered
// it; rows with controlled == false are ones cmc saw but does not control.
enum class Source : std::uint8_t {
  kClockGettime,
  kGettimeofday,
  kTime,
  kClockGetres,
  kGetcpu,
  kTimedWait, // poll, epoll_wait, select, ... with a finite timeout
  kSleep,     // nanosleep, clock_nanosleep
  kTimerfd,   // timerfd_settime, timerfd_gettime
  kGetrandom,
  kDevRandom,         // read() of /dev/urandom or /dev/random
  kAtRandom,          // the 16 bytes of AT_RANDOM in the auxiliary vector
  kRdtsc,             // rdtsc and rdtscp, trapped by PR_SET_TSC
  kRdtscPatched,      // rdtsc and rdtscp at sites patched with int3
  kRdtscBeforeEntry,  // the same where PR_SET_TSC traps, before the entry
  kRdtscUncontrolled, // rdtsc: no trap, and code mapped that cmc could not
                      // scan
  kRseq,
  kIoUring,
  kRdrand,        // rdrand/rdseed sites, where CPUID faulting cannot hide them
  kTimes,         // times(), getrusage(), sysinfo(): passed through
  kCpuid,         // cpuid, trapped by CPUID faulting and answered
  kCpuidNative,   // cpuid sites, where the CPU has no CPUID faulting
  kRdpid,         // rdpid sites, where CPUID faulting cannot hide it
  kAffinity,      // sched_getaffinity, sched_setaffinity
  kProcClock,     // read() of /proc/uptime, /proc/stat, /proc/loadavg
  kProcTaskStat,  // read() of /proc/PID/stat, /proc/PID/task/TID/stat
  kProcOther,     // read() of another /proc file with times or counters
  kProcVector,    // readv() of a /proc file with times
  kNetlink,       // time stamps and counters of NETLINK_ROUTE replies
  kTcpInfo,       // getsockopt(TCP_INFO): round-trip times, timers, rates
  kIntervalTimer, // alarm, setitimer, getitimer
  kPosixTimer,    // timer_create, timer_settime, ...
  kCount,
};

// How the target reached a source.
enum class Via : std::uint8_t {
  kSyscall, // a system call, stopped by the seccomp filter
  kVdso,    // a vDSO function, patched to make the system call
  kOther,   // an instruction or the auxiliary vector
};

struct SourceInfo {
  std::string_view name;    // "clock_gettime", "/dev/urandom", ...
  std::string_view control; // "virtual clock", "seeded generator", ...
  bool controlled;
};

[[nodiscard]] const SourceInfo &source_info(Source source);

// Which sources a run (or a whole search) used, and by which way.
class Sources {
public:
  void note(Source source, Via via) { bits_.set(bit(source, via)); }
  [[nodiscard]] bool used(Source source, Via via) const {
    return bits_.test(bit(source, via));
  }
  // An instruction site of an uncontrolled source ("demo+0x1234"), which
  // the report names; noted with the source.
  void note_site(Source source, const std::string &site) {
    note(source, Via::kOther);
    sites_[source].insert(site);
  }
  [[nodiscard]] const std::set<std::string> &sites(Source source) const {
    static const std::set<std::string> kNone;
    const auto found = sites_.find(source);
    return found != sites_.end() ? found->second : kNone;
  }
  // The number of rdtsc sites a run patched (kRdtscPatched,
  // kRdtscBeforeEntry).
  void note_tsc_sites(std::size_t count) {
    tsc_sites_ = std::max(tsc_sites_, count);
  }
  [[nodiscard]] std::size_t tsc_sites() const { return tsc_sites_; }
  void merge(const Sources &other) {
    bits_ |= other.bits_;
    note_tsc_sites(other.tsc_sites_);
    for (const auto &[source, sites] : other.sites_)
      sites_[source].insert(sites.begin(), sites.end());
  }
  friend bool operator==(const Sources &, const Sources &) = default;

private:
  static constexpr unsigned kVias = 3;
  static constexpr unsigned bit(Source source, Via via) {
    return static_cast<unsigned>(source) * kVias + static_cast<unsigned>(via);
  }
  std::bitset<static_cast<std::size_t>(Source::kCount) * kVias> bits_;
  std::size_t tsc_sites_ = 0;
  std::map<Source, std::set<std::string>> sites_;
};

// How cmc answered a source used, as the report says it: source_info's
// control, with the number of sites patched for kRdtscPatched and
// kRdtscBeforeEntry, and the sites noted (the first few) for the others.
[[nodiscard]] std::string control_text(Source source, const Sources &sources);

} // namespace cmc::executor
