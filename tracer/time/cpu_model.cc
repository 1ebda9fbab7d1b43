#include "tracer/time/cpu_model.h"

#include <asm/prctl.h>
#include <cpuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>

#include "util/log.h"

namespace cmc::tracer {
namespace {

constexpr std::uint32_t kRdrand = 1U << 30;    // leaf 1 ecx
constexpr std::uint32_t kRdseed = 1U << 18;    // leaf 7 ebx
constexpr std::uint32_t kRdpid = 1U << 22;     // leaf 7 ecx
constexpr std::uint32_t kTscLeaf = 0x15;       // TSC and crystal clock
constexpr std::uint32_t kFrequencyLeaf = 0x16; // base, maximum, bus MHz
constexpr std::uint32_t kHypervisorTsc = 0x40000010;
// The crystal clock leaf 0x15 presents: 25 MHz, as on Intel's server
// parts; the TSC is then ecx * ebx / eax = 25 MHz * khz / 25000.
constexpr std::uint32_t kCrystalHz = 25'000'000;
constexpr std::uint32_t kCrystalKhz = kCrystalHz / 1000;
constexpr std::uint64_t kDefaultKhz = 1'000'000;

CpuidLeaf raw_cpuid(std::uint32_t leaf, std::uint32_t subleaf) {
  CpuidLeaf out{};
  __cpuid_count(leaf, subleaf, out[0], out[1], out[2], out[3]);
  return out;
}

// Runs in a child of cmc (which has threads): async-signal-safe calls only.
[[noreturn]] void run_cpuid_probe() {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); // no core file of the fault
  signal(SIGSEGV, SIG_DFL);
  if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0)
    _exit(2);
  const volatile CpuidLeaf leaf = raw_cpuid(0, 0);
  (void)leaf;
  _exit(0);
}

bool probe_cpuid_faults() {
  const char *forced = std::getenv("CMC_CPUID");
  if (forced != nullptr && std::string_view(forced) == "native")
    return false;
  const pid_t child = fork();
  if (child == 0)
    run_cpuid_probe();
  int status = 0;
  while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool faults =
      child > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
  CMC_LOG_INFO("tracer", "cpuid after ARCH_SET_CPUID(0): {}",
               faults ? "faults; the target's cpuid is answered by cmc"
                      : "runs (no CPUID faulting); the target reads the "
                        "host's CPU");
  return faults;
}

std::uint64_t probe_tsc_khz() {
  const CpuidLeaf basic = raw_cpuid(0, 0);
  if (basic[0] >= kTscLeaf) {
    const CpuidLeaf tsc = raw_cpuid(kTscLeaf, 0);
    if (tsc[0] != 0 && tsc[1] != 0 && tsc[2] != 0)
      return std::uint64_t{tsc[2]} * tsc[1] / tsc[0] / 1000;
  }
  if (raw_cpuid(0x40000000, 0)[0] >= kHypervisorTsc)
    if (const std::uint32_t khz = raw_cpuid(kHypervisorTsc, 0)[0]; khz != 0)
      return khz;
  if (basic[0] >= kFrequencyLeaf)
    if (const std::uint32_t mhz = raw_cpuid(kFrequencyLeaf, 0)[0] & 0xffff;
        mhz != 0)
      return std::uint64_t{mhz} * 1000;
  std::ifstream file("/proc/cpuinfo");
  std::stringstream text;
  text << file.rdbuf();
  const std::uint64_t khz = cpuinfo_khz(text.str());
  return khz != 0 ? khz : kDefaultKhz;
}

// The highest leaf of the range (basic, hypervisor, extended) leaf is in.
std::uint32_t range_top(std::uint32_t leaf) {
  const std::uint32_t base = leaf & 0xf0000000U;
  return raw_cpuid(base, 0)[0];
}

} // namespace

bool cpuid_faults() {
  static const bool faults = probe_cpuid_faults();
  return faults;
}

std::uint64_t host_tsc_khz() {
  static const std::uint64_t khz = [] {
    const std::uint64_t found = probe_tsc_khz();
    CMC_LOG_INFO("tracer", "the virtual TSC ticks at {} kHz", found);
    return found;
  }();
  return khz;
}

std::uint64_t cpuinfo_khz(std::string_view cpuinfo) {
  constexpr std::string_view kKey = "cpu MHz";
  const std::size_t at = cpuinfo.find(kKey);
  if (at == std::string_view::npos)
    return 0;
  const std::size_t colon = cpuinfo.find(':', at);
  if (colon == std::string_view::npos)
    return 0;
  const std::size_t start = cpuinfo.find_first_not_of(" \t", colon + 1);
  if (start == std::string_view::npos)
    return 0;
  double mhz = 0;
  const char *first = cpuinfo.data() + start;
  const auto [end, error] =
      std::from_chars(first, cpuinfo.data() + cpuinfo.size(), mhz);
  if (error != std::errc{} || mhz <= 0)
    return 0;
  return static_cast<std::uint64_t>(std::llround(mhz)) * 1000;
}

CpuidLeaf present_leaf(std::uint32_t leaf, std::uint32_t subleaf,
                       const CpuidLeaf &host, std::uint64_t tsc_khz) {
  CpuidLeaf out = host;
  const auto mhz = static_cast<std::uint32_t>(tsc_khz / 1000);
  switch (leaf) {
  case 0:
    out[0] = std::max(out[0], kFrequencyLeaf);
    break;
  case 1:
    out[1] &= 0x00ffffffU;
    out[2] &= ~kRdrand;
    break;
  case 7:
    if (subleaf == 0) {
      out[1] &= ~kRdseed;
      out[2] &= ~kRdpid;
    }
    break;
  case 0xb:
  case 0x1f:
    out[3] = 0;
    break;
  case kTscLeaf:
    out = {kCrystalKhz, static_cast<std::uint32_t>(tsc_khz), kCrystalHz, 0};
    break;
  case kFrequencyLeaf:
    out = {mhz, mhz, 100, 0};
    break;
  case 0x8000001e:
    out[0] = 0;
    out[1] &= ~0xffU;
    out[2] &= ~0xffU;
    break;
  default:
    break;
  }
  return out;
}

CpuidLeaf cpuid_answer(std::uint32_t leaf, std::uint32_t subleaf) {
  static std::mutex mutex;
  static std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidLeaf> read;
  CpuidLeaf host{};
  {
    const std::scoped_lock lock(mutex);
    const auto key = std::pair(leaf, subleaf);
    auto found = read.find(key);
    if (found == read.end()) {
      // A leaf past the top of its range: Intel parts answer the highest
      // basic leaf's values, which name no feature; cmc answers zeros.
      const bool beyond = (leaf & 0x0fffffffU) != 0 && leaf > range_top(leaf);
      found = read.emplace(key, beyond ? CpuidLeaf{} : raw_cpuid(leaf, subleaf))
                  .first;
    }
    host = found->second;
  }
  return present_leaf(leaf, subleaf, host, host_tsc_khz());
}

} // namespace cmc::tracer
