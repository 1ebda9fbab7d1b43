// CPU identity (tests/integration/targets/cpu_identity.c): a server whose
// bug shows only off CPU 0 (by sched_getcpu, cpuid's APIC id, rdpid or
// sched_getaffinity) gets the same verdict whichever CPU cmc runs on, and
// times by the TSC at the rate cpuid states.

#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/integration/run_cmc.h"
#include "tracer/time/cpu_model.h"

namespace cmc::testing {
namespace {

// CMC_CPUID=native for the cmc runs of a scope: the path of a CPU without
// CPUID faulting.
class NativeCpuid {
public:
  NativeCpuid() { setenv("CMC_CPUID", "native", 1); }
  NativeCpuid(const NativeCpuid &) = delete;
  NativeCpuid &operator=(const NativeCpuid &) = delete;
  ~NativeCpuid() { unsetenv("CMC_CPUID"); }
};

// The test process (and so cmc, its child) pinned to one CPU for a scope,
// as `taskset -c CPU` would.
class Pinned {
public:
  explicit Pinned(int cpu) {
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  Pinned(const Pinned &) = delete;
  Pinned &operator=(const Pinned &) = delete;
  ~Pinned() { sched_setaffinity(0, sizeof saved_, &saved_); }

private:
  cpu_set_t saved_{};
};

// The CPUs this test may run on (its affinity), the first two.
std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu)
    if (CPU_ISSET(cpu, &set))
      cpus.push_back(cpu);
  return cpus;
}

Outcome check_identity(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",    "-q",        "-m",          "SET a\\n", "-m",     "SET b\\n",
      "--region", "cmc_state", "--invariant", "sticky",   "--json", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("cpu_identity"), "7000"});
  return run_cmc(args);
}

// The control the report names for source, in sources or uncontrolled.
std::string control_of(const nlohmann::json &rows, const std::string &source) {
  for (const auto &entry : rows)
    if (entry["source"] == source)
      return entry["control"];
  return "";
}

class CpuIdentity : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }

  // kv's 4 states and 8 transitions, as on CPU 0.
  static void expect_holds(const Outcome &run, const std::string &where) {
    ASSERT_EQ(run.status, 0) << where << ": " << run.err << run.out;
    const auto json = run.json();
    EXPECT_EQ(json["verdict"], "holds") << where;
    EXPECT_EQ(json["distinct_states"], 4) << where;
    EXPECT_EQ(json["transitions"], 8) << where;
    EXPECT_EQ(control_of(json["sources"], "sched_getaffinity"),
              "answered CPU 0 only")
        << where << json["sources"];
  }
};

TEST_F(CpuIdentity, EveryCpuAndBothJobCountsGiveTheVerdictOfCpuZero) {
  if (!tracer::cpuid_faults())
    GTEST_SKIP() << "no CPUID faulting on this CPU: cpuid reads the APIC id "
                    "of the CPU it runs on (NativeCpuidSitesAreListed covers "
                    "that path)";
  for (const int cpu : usable_cpus()) {
    const Pinned pinned(cpu);
    expect_holds(check_identity({"-j", "1"}), "CPU " + std::to_string(cpu));
  }
  const Outcome parallel = check_identity({"-j", "2"});
  expect_holds(parallel, "-j2");
  const auto json = parallel.json();
  EXPECT_EQ(control_of(json["sources"], "cpuid"),
            "trapped (CPUID faulting), a fixed CPU 0 without rdrand, rdseed, "
            "rdpid")
      << json["sources"];
  EXPECT_FALSE(has(json["uncontrolled"].dump(), "cpuid") ||
               has(json["uncontrolled"].dump(), "rdpid"))
      << json["uncontrolled"];
}

TEST_F(CpuIdentity, TheTscRunsAtTheRateCpuidStates) {
  if (!tracer::cpuid_faults())
    GTEST_SKIP() << "no CPUID faulting on this CPU: cmc cannot state the "
                    "TSC's rate in cpuid leaf 0x15";
  // After a 2 s tick, "SET b" compares the TSC at leaf 0x15's rate with
  // CLOCK_MONOTONIC: any other rate loses cell a (exit 1).
  const Outcome run = check_identity({"--tick", "2s", "--max-ticks", "1"});
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  EXPECT_EQ(run.json()["verdict"], "holds");
}

TEST_F(CpuIdentity, NativeCpuidSitesAreListed) {
  const NativeCpuid native;
  // Affinity and getcpu are still answered: on CPU 0 the check holds; the
  // report names the demo's cpuid and rdpid sites as not controlled.
  const Pinned pinned(usable_cpus().front());
  const Outcome run = check_identity();
  ASSERT_TRUE(run.status == 0 || run.status == 1) << run.err << run.out;
  const auto json = run.json();
  EXPECT_EQ(control_of(json["sources"], "sched_getaffinity"),
            "answered CPU 0 only")
      << json["sources"];
  const std::string cpuid = control_of(json["uncontrolled"], "cpuid");
  EXPECT_TRUE(has(cpuid, "cpuid cpu_identity+0x")) << json["uncontrolled"];
  // ld.so's and libc's too, after the first few named.
  EXPECT_TRUE(has(cpuid, " more")) << json["uncontrolled"];
  EXPECT_TRUE(
      has(control_of(json["uncontrolled"], "rdpid"), "rdpid cpu_identity+0x"))
      << json["uncontrolled"];
  EXPECT_EQ(control_of(json["sources"], "cpuid"), "") << json["sources"];
}

} // namespace
} // namespace cmc::testing
