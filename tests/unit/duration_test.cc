#include "util/duration.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cmc {
namespace {

using namespace std::chrono_literals;

TEST(Duration, ParsesEachUnit) {
  EXPECT_EQ(*parse_duration("10s"), 10s);
  EXPECT_EQ(*parse_duration("250ms"), 250ms);
  EXPECT_EQ(*parse_duration("3us"), 3us);
  EXPECT_EQ(*parse_duration("7ns"), 7ns);
  EXPECT_EQ(*parse_duration("2m"), 2min);
  EXPECT_EQ(*parse_duration("1h"), 1h);
}

TEST(Duration, RefusesWhatIsNotAPositiveDuration) {
  for (const char *bad : {"", "10", "s", "0s", "-1s", "1.5s", "10 s", "10sec",
                          "99999999999999999h"})
    EXPECT_FALSE(parse_duration(bad).ok()) << bad;
}

// The virtual clocks count int64 nanoseconds from 2026: a duration past
// 100 years would make them wrap.
TEST(Duration, RefusesMoreThanAHundredYears) {
  EXPECT_EQ(*parse_duration("876000h"), kLongestDuration);
  EXPECT_FALSE(parse_duration("876001h").ok());
  EXPECT_FALSE(parse_duration("9223372036854775807ns").ok());
  const auto error = parse_duration("2562047h").error().message;
  EXPECT_NE(error.find("at most 100 years (876000h)"), std::string::npos)
      << error;
}

TEST(Timeout, TakesSecondsFromAMillisecondToADay) {
  EXPECT_EQ(*timeout_of_seconds(0.5), 500ms);
  EXPECT_EQ(*timeout_of_seconds(0.001), 1ms);
  EXPECT_EQ(*timeout_of_seconds(86400), 86400s);
  EXPECT_EQ(*timeout_of_seconds(2, 2s), 2s);
}

// 1e10 s made the step deadline overflow: every step "hung" at once.
TEST(Timeout, RefusesWhatIsOutOfRange) {
  for (const double bad : {0.0, -1.0, 0.0004, 86400.5, 1e10, 1e18, std::nan(""),
                           HUGE_VAL, -HUGE_VAL})
    EXPECT_FALSE(timeout_of_seconds(bad).ok()) << bad;
  const auto error = timeout_of_seconds(1e10).error().message;
  EXPECT_TRUE(error.ends_with(" is not a timeout: give a number of seconds "
                              "from 0.001 to 86400"))
      << error;
}

TEST(Duration, FormatsInTheLargestWholeUnit) {
  EXPECT_EQ(format_duration(10s), "10s");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(120s), "2m");
  EXPECT_EQ(format_duration(250ms), "250ms");
}

} // namespace
} // namespace cmc
