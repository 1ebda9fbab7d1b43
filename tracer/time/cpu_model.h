#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cmc::tracer {

// What cpuid returns: eax, ebx, ecx, edx.
using CpuidLeaf = std::array<std::uint32_t, 4>;

// Whether cpuid faults in a process that set arch_prctl(ARCH_SET_CPUID, 0)
// (CPUID faulting: Intel parts and KVM guests of them; the kernel answers
// ENODEV where the CPU lacks it, as AMD parts do). Probed once per cmc
// process, by a child that sets it and runs cpuid. CMC_CPUID=native in the
// environment answers false, to take the path of a CPU without it.
[[nodiscard]] bool cpuid_faults();

// The frequency of the host's time stamp counter in kHz, found once per cmc
// process: CPUID leaf 0x15 (crystal clock times ratio) where it is complete,
// else the hypervisor's leaf 0x40000010 (VMware, some KVM setups), else
// leaf 0x16's base frequency, else the "cpu MHz" of /proc/cpuinfo, which on
// a CPU with a constant TSC is the kernel's cpu_khz, the frequency it
// calibrated the TSC at (KVM guests fill none of the leaves); 1 GHz when
// none says.
[[nodiscard]] std::uint64_t host_tsc_khz();

// The "cpu MHz" of the first processor of /proc/cpuinfo text, in kHz
// rounded to the MHz (it moves by a few kHz between boots); 0 if none.
[[nodiscard]] std::uint64_t cpuinfo_khz(std::string_view cpuinfo);

// The leaf cpuid answers the target with: the host's leaf, as cmc read it,
// with rdrand (leaf 1 ecx bit 30), rdseed (leaf 7 ebx bit 18) and rdpid
// (leaf 7 ecx bit 22) hidden; every number that says which CPU runs the
// code (the initial APIC id in leaf 1 ebx[31:24], the x2APIC id in leaves
// 0xb and 0x1f edx, AMD's extended APIC, core and node ids in 0x8000001e)
// that of CPU 0; and the TSC at tsc_khz in leaves 0x15 and 0x16 (the
// highest basic leaf raised to 0x16 if lower), so that a program timing by
// the TSC computes the rate of the virtual clock.
[[nodiscard]] CpuidLeaf present_leaf(std::uint32_t leaf, std::uint32_t subleaf,
                                     const CpuidLeaf &host,
                                     std::uint64_t tsc_khz);

// present_leaf of the host's leaf, each read once per cmc process (the
// same answer whichever CPU cmc's thread runs on), at host_tsc_khz().
[[nodiscard]] CpuidLeaf cpuid_answer(std::uint32_t leaf, std::uint32_t subleaf);

} // namespace cmc::tracer
