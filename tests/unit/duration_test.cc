#include "util/duration.h"

#include <gtest/gtest.h>

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

TEST(Duration, FormatsInTheLargestWholeUnit) {
  EXPECT_EQ(format_duration(10s), "10s");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(120s), "2m");
  EXPECT_EQ(format_duration(250ms), "250ms");
}

} // namespace
} // namespace cmc
