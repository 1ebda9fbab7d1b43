// Laying the sites a run executed over the scan of the same files.

#include <gtest/gtest.h>

#include "app/cli/site_marks.h"

namespace cmc::app {
namespace {

decoder::SyscallSite site_at(std::uint64_t address) {
  decoder::SyscallSite site;
  site.address = address;
  return site;
}

// A module whose code segment maps file offset 0x1000 at 0x401000.
Module module() {
  Module module;
  module.path = "/usr/bin/server";
  module.id = {8, 1, 42};
  module.loads = {{0x400000, 0x1000, 0, 0x1000, 4},
                  {0x401000, 0x2000, 0x1000, 0x2000, 5}};
  module.file.sites = {site_at(0x401010), site_at(0x401800)};
  return module;
}

tracer::ObservedSite seen(std::string path, decoder::FileId file,
                          std::uint64_t offset, std::size_t count) {
  tracer::ObservedSite site;
  site.path = std::move(path);
  site.file = file;
  site.file_offset = offset;
  site.numbers = {0};
  site.count = count;
  return site;
}

TEST(SiteMarks, PlacesAFileOffsetThroughItsLoadSegment) {
  const std::vector<tracer::ObservedSite> observed{
      seen("/usr/bin/server", {8, 1, 42}, 0x1800, 3)};
  const SiteMarks marks = mark_sites({module()}, observed);
  EXPECT_EQ(marks.stops.at(0), (std::vector<std::size_t>{0, 3}));
  EXPECT_TRUE(marks.unscanned.empty());
}

// Paths in maps are resolved: the file is matched by device and inode.
TEST(SiteMarks, MatchesTheFileByInodeNotByPath) {
  const std::vector<tracer::ObservedSite> observed{
      seen("/usr/bin/other-name", {8, 1, 42}, 0x1010, 1)};
  EXPECT_EQ(mark_sites({module()}, observed).stops.at(0)[0], 1U);
}

TEST(SiteMarks, ASiteTheScanMissedIsReportedAsMissed) {
  const std::vector<tracer::ObservedSite> observed{
      seen("/usr/bin/server", {8, 1, 42}, 0x1020, 1),
      seen("/usr/lib/libplugin.so", {8, 1, 7}, 0x30, 2)};
  const SiteMarks marks = mark_sites({module()}, observed);
  ASSERT_EQ(marks.unscanned.size(), 2U);
  EXPECT_TRUE(marks.unscanned[0].in_module);
  EXPECT_EQ(marks.unscanned[0].address, 0x401020U);
  EXPECT_FALSE(marks.unscanned[1].in_module);
  EXPECT_EQ(marks.unscanned[1].address, 0x30U);
}

TEST(SiteMarks, CountsCallsPerVdsoFunction) {
  tracer::ObservedSite clock = seen("[vdso]", {}, 0x700, 2);
  clock.vdso_function = "__vdso_clock_gettime";
  tracer::ObservedSite time = seen("[vdso]", {}, 0x900, 1);
  time.vdso_function = "__vdso_time";
  const SiteMarks marks = mark_sites({module()}, {clock, time, clock});
  ASSERT_EQ(marks.vdso_calls.size(), 2U);
  EXPECT_EQ(marks.vdso_calls[0].function, "__vdso_clock_gettime");
  EXPECT_EQ(marks.vdso_calls[0].calls, 4U);
  EXPECT_EQ(marks.vdso_calls[1].calls, 1U);
}

} // namespace
} // namespace cmc::app
