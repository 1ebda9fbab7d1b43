// The text cmc answers for the files of /proc that carry the kernel's
// clock: the virtual clock's, whatever the kernel's said.

#include <gtest/gtest.h>

#include "tracer/syscalls/proc_times.h"

namespace cmc::tracer {
namespace {

TEST(ProcTimes, FilesAreKnownByTheirPathInProcfs) {
  EXPECT_EQ(proc_times_of("uptime"), ProcTimes::kUptime);
  EXPECT_EQ(proc_times_of("stat"), ProcTimes::kStat);
  EXPECT_EQ(proc_times_of("loadavg"), ProcTimes::kLoadavg);
  EXPECT_EQ(proc_times_of("12/stat"), ProcTimes::kTaskStat);
  EXPECT_EQ(proc_times_of("12/task/13/stat"), ProcTimes::kTaskStat);
  EXPECT_EQ(proc_times_of("12/schedstat"), ProcTimes::kOther);
  EXPECT_EQ(proc_times_of("interrupts"), ProcTimes::kOther);
  EXPECT_EQ(proc_times_of("12/maps"), std::nullopt);
  EXPECT_EQ(proc_times_of("self/stat"), std::nullopt); // resolved before
  EXPECT_EQ(proc_times_of("sys/kernel/stat"), std::nullopt);
}

TEST(ProcTimes, UptimeIsTheVirtualClocksWithHundredths) {
  VirtualClock clock;
  EXPECT_EQ(virtual_proc_text(ProcTimes::kUptime, "", clock), "1000.00 0.00\n");
  clock.advance(std::chrono::milliseconds(10'237));
  EXPECT_EQ(virtual_proc_text(ProcTimes::kUptime, "123.45 246.80\n", clock),
            "1010.23 0.00\n");
}

TEST(ProcTimes, StatKeepsItsLinesAndAnswersTheirNumbers) {
  const std::string real = "cpu  41 2 30 9000 5 0 1 0 0 0\n"
                           "cpu0 20 1 15 4500 2 0 1 0 0 0\n"
                           "cpu1 21 1 15 4500 3 0 0 0 0 0\n"
                           "intr 1234 5 6\n"
                           "ctxt 99887\n"
                           "btime 1700000000\n"
                           "processes 4242\n"
                           "procs_running 3\n";
  EXPECT_EQ(virtual_proc_text(ProcTimes::kStat, real, VirtualClock{}),
            "cpu  0 0 0 200000 0 0 0 0 0 0\n"
            "cpu0 0 0 0 100000 0 0 0 0 0 0\n"
            "cpu1 0 0 0 100000 0 0 0 0 0 0\n"
            "intr 0 0 0\n"
            "ctxt 0\n"
            "btime 1767224600\n"
            "processes 1\n"
            "procs_running 1\n");
}

TEST(ProcTimes, TaskStatAnswersTimesFaultsAndTheCpu) {
  // A name with a space and a parenthesis; 52 fields in all.
  std::string real = "7 (a) b) S 1 7 7 0 -1 4194560 120 0 3 0 55 66 1 2 20 "
                     "0 1 0 424242 10000 300";
  for (int field = 25; field <= 52; ++field)
    real += field == 39 ? " 1" : " 9";
  real += "\n";
  VirtualClock clock;
  clock.advance(std::chrono::seconds(2));
  std::string expected = "7 (a) b) S 1 7 7 0 -1 4194560 0 0 0 0 200 0 0 0 "
                         "20 0 1 0 100000 10000 300";
  for (int field = 25; field <= 52; ++field)
    expected += field == 39 || (field >= 42 && field <= 44) ? " 0" : " 9";
  expected += "\n";
  EXPECT_EQ(virtual_proc_text(ProcTimes::kTaskStat, real, clock), expected);
}

} // namespace
} // namespace cmc::tracer
