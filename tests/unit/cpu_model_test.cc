// The CPU cpuid presents to the target (tracer/time/cpu_model.h) and the
// virtual TSC's rate: features that would bypass cmc hidden, every id of
// the CPU running the code that of CPU 0, the TSC's frequency stated.

#include <gtest/gtest.h>

#include <chrono>

#include "tracer/time/cpu_model.h"
#include "tracer/time/virtual_clock.h"

namespace cmc::tracer {
namespace {

constexpr std::uint64_t kKhz = 2'600'000;
constexpr std::uint32_t kAll = 0xffffffffU;

TEST(CpuModel, RdrandRdseedAndRdpidAreHidden) {
  const CpuidLeaf one = present_leaf(1, 0, {kAll, kAll, kAll, kAll}, kKhz);
  EXPECT_EQ(one[2], kAll & ~(1U << 30));
  EXPECT_EQ(one[3], kAll);
  const CpuidLeaf seven = present_leaf(7, 0, {kAll, kAll, kAll, kAll}, kKhz);
  EXPECT_EQ(seven[1], kAll & ~(1U << 18));
  EXPECT_EQ(seven[2], kAll & ~(1U << 22));
  // Subleaf 1 of leaf 7 has other features in those bits.
  EXPECT_EQ(present_leaf(7, 1, {kAll, kAll, kAll, kAll}, kKhz),
            (CpuidLeaf{kAll, kAll, kAll, kAll}));
}

TEST(CpuModel, EveryIdOfTheRunningCpuIsCpuZero) {
  // Leaf 1 of CPU 1 here: APIC id 1, 2 logical processors.
  EXPECT_EQ(present_leaf(1, 0, {0x000a0671, 0x01020800, 0, 0}, kKhz)[1],
            0x00020800U);
  for (const std::uint32_t leaf : {0xbU, 0x1fU}) {
    const CpuidLeaf topology =
        present_leaf(leaf, 1, {5, 2, 0x201, 1}, kKhz); // x2APIC id 1
    EXPECT_EQ(topology, (CpuidLeaf{5, 2, 0x201, 0})) << leaf;
  }
  EXPECT_EQ(present_leaf(0x8000001e, 0, {7, 0x0103, 0x0102, 0}, kKhz),
            (CpuidLeaf{0, 0x0100, 0x0100, 0}));
}

TEST(CpuModel, TheTscLeavesStateTheVirtualTscRate) {
  const CpuidLeaf tsc = present_leaf(0x15, 0, {}, kKhz);
  // TSC Hz = crystal Hz (ecx) * ebx / eax.
  EXPECT_EQ(std::uint64_t{tsc[2]} * tsc[1] / tsc[0], kKhz * 1000);
  EXPECT_EQ(present_leaf(0x16, 0, {}, kKhz)[0], 2600U);
  EXPECT_EQ(present_leaf(0, 0, {0xd, 1, 2, 3}, kKhz),
            (CpuidLeaf{0x16, 1, 2, 3}));
  EXPECT_EQ(present_leaf(0, 0, {0x24, 1, 2, 3}, kKhz)[0], 0x24U);
}

TEST(CpuModel, CpuinfoKhzIsTheFirstCpuMhzRounded) {
  EXPECT_EQ(cpuinfo_khz("processor\t: 0\ncpu MHz\t\t: 2599.998\n"
                        "processor\t: 1\ncpu MHz\t\t: 3100.000\n"),
            2'600'000U);
  EXPECT_EQ(cpuinfo_khz("processor\t: 0\n"), 0U);
  EXPECT_EQ(cpuinfo_khz("cpu MHz\t\t: unknown\n"), 0U);
}

TEST(VirtualClockTsc, TicksAtItsFrequencyFromAnUptimeOf1000s) {
  VirtualClock clock(kKhz);
  EXPECT_EQ(clock.tsc(), 1000 * kKhz * 1000);
  clock.advance(std::chrono::seconds(10));
  EXPECT_EQ(clock.tsc(), 1010 * kKhz * 1000);
  clock.advance(std::chrono::nanoseconds(1));
  EXPECT_EQ(clock.tsc(), 1010 * kKhz * 1000 + 2); // 2.6 ticks, rounded down
  // A clock without a frequency: 1 GHz, one tick per nanosecond.
  EXPECT_EQ(VirtualClock().tsc(), 1'000'000'000'000U);
}

} // namespace
} // namespace cmc::tracer
