// The tracer's control of time and randomness, on the clocks target: the
// real ptrace backend, driven directly through the Executor interface.

#include <gtest/gtest.h>

#include <cstring>

#include "decoder/elf_file.h"
#include "decoder/region.h"
#include "tests/integration/run_cmc.h"
#include "tracer/backend/process_executor.h"
#include "tracer/time/virtual_clock.h"

namespace cmc::testing {
namespace {

using executor::ActionId;
using executor::PathStep;
using executor::Source;
using executor::Via;
using std::chrono::seconds;

// The alphabet of these tests.
constexpr ActionId kSetB = 0;
constexpr ActionId kTime = 1;
constexpr ActionId kSleep = 2;
constexpr ActionId kTick = 3;

// Region bytes of clocks: cmc_state[3], entropy[40], times[4].
constexpr std::size_t kEntropy = 3;
constexpr std::size_t kTimes = kEntropy + 40;

struct Clocks {
  std::string mode = "poll";
  std::chrono::nanoseconds tick = seconds(10);
  std::uint64_t seed = 0;
};

std::shared_ptr<const tracer::TargetSpec> clocks_spec(const Clocks &options) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->launch.program = target("clocks");
  spec->launch.argv = {spec->launch.program, options.mode, "7000"};
  auto elf = decoder::ElfFile::open(spec->launch.program);
  EXPECT_TRUE(elf.ok());
  for (const char *name : {"cmc_state", "entropy", "times"}) {
    auto region =
        decoder::resolve_region(*decoder::parse_region_spec(name), *elf);
    EXPECT_TRUE(region.ok());
    spec->regions.push_back(*region);
  }
  spec->load_base = elf->load_base();
  spec->entry = elf->entry();
  spec->messages = {"SET b\n", "TIME\n", "SLEEP\n"};
  spec->tick = options.tick;
  spec->seed = options.seed;
  return spec;
}

Result<executor::Observation> run(const Clocks &options,
                                  std::vector<PathStep> path) {
  tracer::ProcessExecutor executor(clocks_spec(options));
  return executor.run(path);
}

std::vector<std::byte> bytes_after(const Clocks &options,
                                   std::vector<PathStep> path) {
  auto seen = run(options, std::move(path));
  EXPECT_TRUE(seen.ok()) << (seen.ok() ? "" : seen.error().message);
  EXPECT_FALSE(seen.ok() && seen->fault) << seen->fault->describe();
  return seen.ok() ? seen->after : std::vector<std::byte>();
}

std::array<std::int64_t, 4> times_after(const Clocks &options,
                                        std::vector<PathStep> path) {
  const auto bytes = bytes_after(options, std::move(path));
  std::array<std::int64_t, 4> times{};
  if (bytes.size() == kTimes + sizeof times)
    std::memcpy(times.data(), bytes.data() + kTimes, sizeof times);
  return times;
}

class Control : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived its run";
  }
};

TEST_F(Control, EveryClockReadsTheVirtualClockThroughThePatchedVdso) {
  const std::int64_t start = tracer::VirtualClock::kRealtimeStart.count();
  const std::int64_t uptime = tracer::VirtualClock::kMonotonicStart.count();
  EXPECT_EQ(times_after({}, {kTime}),
            (std::array<std::int64_t, 4>{start, start, start, uptime}));
  EXPECT_EQ(times_after({}, {kTick, kTick, kTime}),
            (std::array<std::int64_t, 4>{start + 20, start + 20, start + 20,
                                         uptime + 20}));
  auto seen = run({}, {kTime});
  ASSERT_TRUE(seen.ok());
  for (const Source source :
       {Source::kClockGettime, Source::kGettimeofday, Source::kTime})
    EXPECT_TRUE(seen->sources.used(source, Via::kVdso))
        << executor::source_info(source).name;
  EXPECT_FALSE(seen->sources.used(Source::kClockGettime, Via::kSyscall));
}

TEST_F(Control, TheClockIsPartOfTheState) {
  auto seen = run({.tick = seconds(1)}, {kTick});
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->before, seen->after); // a 1 s tick fires nothing
  EXPECT_NE(seen->fingerprints[0], seen->fingerprints[1]);
}

class TimedWait : public Control,
                  public ::testing::WithParamInterface<const char *> {};

TEST_P(TimedWait, FiresWhenATickPassesItsDeadline) {
  const Clocks ten{GetParam(), seconds(10)};
  EXPECT_EQ(bytes_after(ten, {}).at(0), std::byte{0});
  EXPECT_EQ(bytes_after(ten, {kSetB}).at(0), std::byte{0});
  EXPECT_EQ(bytes_after(ten, {kTick}).at(0), std::byte{1});
  auto seen = run(ten, {kTick});
  ASSERT_TRUE(seen.ok());
  EXPECT_TRUE(seen->sources.used(Source::kTimedWait, Via::kSyscall) ||
              seen->sources.used(Source::kTimerfd, Via::kSyscall));
  // The deadline is 5 s after the wait began: four 1 s ticks are short.
  const Clocks one{GetParam(), seconds(1)};
  EXPECT_EQ(bytes_after(one, {kTick, kTick, kTick, kTick}).at(0), std::byte{0});
  EXPECT_EQ(bytes_after(one, {kTick, kTick, kTick, kTick, kTick}).at(0),
            std::byte{1});
}

INSTANTIATE_TEST_SUITE_P(Calls, TimedWait,
                         ::testing::Values("poll", "ppoll", "select", "epoll",
                                           "timerfd"));

TEST_F(Control, TheDeadlineOfAWaitIsPartOfTheState) {
  // Both wait 4 s more for a timeout at 5 s, but the first began its wait
  // 1 s later, after SET b: its deadline is at 6 s.
  const Clocks one{"poll", seconds(1)};
  auto late = run(one, {kTick, kSetB});
  auto early = run(one, {kSetB, kTick});
  ASSERT_TRUE(late.ok() && early.ok());
  EXPECT_EQ(late->after, early->after);
  EXPECT_NE(late->fingerprints.back(), early->fingerprints.back());
}

class Sleep : public Control,
              public ::testing::WithParamInterface<const char *> {};

TEST_P(Sleep, EndsOnATickAndNotBefore) {
  const Clocks clocks{GetParam()};
  auto asleep = run(clocks, {kSleep});
  ASSERT_TRUE(asleep.ok());
  EXPECT_FALSE(asleep->fault);
  EXPECT_EQ(asleep->after.at(2), std::byte{0});
  EXPECT_EQ(asleep->received.back().at(0), "");
  auto woken = run(clocks, {kSleep, kTick});
  ASSERT_TRUE(woken.ok());
  EXPECT_EQ(woken->after.at(2), std::byte{1});
  EXPECT_EQ(woken->received.back().at(0), "OK\n");
  EXPECT_TRUE(woken->sources.used(Source::kSleep, Via::kSyscall) ||
              woken->sources.used(Source::kTimedWait, Via::kSyscall));
  // The sleep is 3 s: a 2 s tick is short of it, a second one passes it.
  const Clocks two{GetParam(), seconds(2)};
  EXPECT_EQ(bytes_after(two, {kSleep, kTick}).at(2), std::byte{0});
  EXPECT_EQ(bytes_after(two, {kSleep, kTick, kTick}).at(2), std::byte{1});
}

// nanosleep, then a futex wait with a relative and with an absolute
// timeout (only the timeout can end one in a single-threaded target).
INSTANTIATE_TEST_SUITE_P(Calls, Sleep,
                         ::testing::Values("poll", "futex", "futexabs"));

TEST_F(Control, RandomnessComesFromTheSeed) {
  const Clocks one{.mode = "entropy", .seed = 1};
  const auto first = bytes_after(one, {});
  ASSERT_EQ(first.size(), kTimes + 32);
  const std::vector<std::byte> entropy(first.begin() + kEntropy,
                                       first.begin() + kTimes);
  EXPECT_NE(entropy, std::vector<std::byte>(entropy.size()));
  EXPECT_EQ(bytes_after(one, {}), first);
  const Clocks two{.mode = "entropy", .seed = 2};
  const auto other = bytes_after(two, {});
  ASSERT_EQ(other.size(), first.size());
  // getrandom, /dev/urandom and AT_RANDOM follow the seed; rdtsc does not.
  EXPECT_NE(std::memcmp(first.data() + kEntropy, other.data() + kEntropy, 8),
            0);
  EXPECT_NE(
      std::memcmp(first.data() + kEntropy + 8, other.data() + kEntropy + 8, 8),
      0);
  EXPECT_NE(std::memcmp(first.data() + kEntropy + 16,
                        other.data() + kEntropy + 16, 16),
            0);
  EXPECT_EQ(std::memcmp(first.data() + kEntropy + 32,
                        other.data() + kEntropy + 32, 8),
            0);
  auto seen = run(one, {});
  ASSERT_TRUE(seen.ok());
  EXPECT_TRUE(seen->sources.used(Source::kGetrandom, Via::kSyscall));
  EXPECT_TRUE(seen->sources.used(Source::kDevRandom, Via::kSyscall));
  EXPECT_TRUE(seen->sources.used(Source::kAtRandom, Via::kOther));
  // Trapped where PR_SET_TSC traps, else at its patched site.
  EXPECT_TRUE(seen->sources.used(Source::kRdtsc, Via::kOther) ||
              seen->sources.used(Source::kRdtscPatched, Via::kOther));
  EXPECT_FALSE(seen->sources.used(Source::kRdtscUncontrolled, Via::kOther));
}

TEST_F(Control, AClockReadPastTheVdsoIsAnErrorNamingIt) {
  auto seen = run({.mode = "vvar"}, {});
  ASSERT_FALSE(seen.ok());
  EXPECT_NE(seen.error().message.find("[vvar]"), std::string::npos)
      << seen.error().message;
}

} // namespace
} // namespace cmc::testing
