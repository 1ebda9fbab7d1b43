// The report's rows of time and randomness: rdtsc names how it was
// controlled, with the number of sites patched merged over runs.

#include <gtest/gtest.h>

#include "executor/sources.h"

namespace cmc::executor {
namespace {

TEST(Sources, PatchedRdtscSaysHowManySitesTheLargestRunPatched) {
  Sources first;
  first.note(Source::kRdtscPatched, Via::kOther);
  first.note_tsc_sites(25);
  Sources later; // a run that also patched a library dlopen mapped
  later.note(Source::kRdtscPatched, Via::kOther);
  later.note_tsc_sites(26);
  first.merge(later);
  EXPECT_TRUE(first.used(Source::kRdtscPatched, Via::kOther));
  EXPECT_EQ(control_text(Source::kRdtscPatched, first),
            "patched 26 sites with int3 (PR_SET_TSC does not trap here), "
            "virtual clock");
  EXPECT_EQ(control_text(Source::kRdtsc, first),
            "trapped (PR_SET_TSC), virtual clock");
}

TEST(Sources, SitesPatchedOnlyUntilTheEntrySaySo) {
  Sources sources;
  sources.note(Source::kRdtscBeforeEntry, Via::kOther);
  sources.note_tsc_sites(23);
  EXPECT_EQ(control_text(Source::kRdtscBeforeEntry, sources),
            "patched 23 sites with int3 before the program's entry (ld.so "
            "and the constructors run before PR_SET_TSC is set there), "
            "virtual clock");
  EXPECT_TRUE(source_info(Source::kRdtscBeforeEntry).controlled);
}

TEST(Sources, RdtscInCodeCmcCouldNotScanIsNotControlled) {
  EXPECT_FALSE(source_info(Source::kRdtscUncontrolled).controlled);
  EXPECT_EQ(source_info(Source::kRdtscUncontrolled).name, "rdtsc");
  EXPECT_TRUE(source_info(Source::kRdtscPatched).controlled);
}

TEST(Sources, UncontrolledCpuInstructionsNameTheirFirstSitesMergedOverRuns) {
  Sources first;
  first.note_site(Source::kRdpid, "rdpid demo+0x1200");
  Sources later;
  for (const char *site :
       {"rdpid demo+0x1100", "rdpid demo+0x1200", "rdpid libx.so+0x10",
        "rdpid libx.so+0x20", "rdpid libx.so+0x30"})
    later.note_site(Source::kRdpid, site);
  first.merge(later);
  EXPECT_TRUE(first.used(Source::kRdpid, Via::kOther));
  EXPECT_FALSE(source_info(Source::kRdpid).controlled);
  EXPECT_EQ(control_text(Source::kRdpid, first),
            "no CPUID faulting here to hide it: the CPU it runs on, at rdpid "
            "demo+0x1100, rdpid demo+0x1200, rdpid libx.so+0x10, rdpid "
            "libx.so+0x20 and 1 more");
  EXPECT_EQ(control_text(Source::kCpuid, first),
            "trapped (CPUID faulting), a fixed CPU 0 without rdrand, rdseed, "
            "rdpid");
}

TEST(Sources, EveryRowOfEveryWayHasABitOfItsOwn) {
  Sources sources;
  sources.note(Source::kAffinity, Via::kSyscall);
  EXPECT_TRUE(sources.used(Source::kAffinity, Via::kSyscall));
  EXPECT_FALSE(sources.used(Source::kAffinity, Via::kVdso));
  EXPECT_FALSE(sources.used(Source::kCpuidNative, Via::kSyscall));
}

} // namespace
} // namespace cmc::executor
