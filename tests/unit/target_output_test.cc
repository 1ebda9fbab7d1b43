// What cmc keeps of a target's output (tracer::TargetOutput): the first and
// the last 4 KiB, and how many bytes it wrote.

#include <gtest/gtest.h>

#include <string>

#include "tracer/process/output_drain.h"

namespace cmc::tracer {
namespace {

constexpr std::size_t kKept = TargetOutput::kKept;

TEST(TargetOutput, KeepsEverythingThatFits) {
  TargetOutput output;
  output.append("one\n", 4);
  output.append("two\n", 4);
  EXPECT_EQ(output.head, "one\ntwo\n");
  EXPECT_EQ(output.tail, "");
  EXPECT_EQ(output.written, 8U);
  EXPECT_EQ(output.dropped(), 0U);
  EXPECT_EQ(output.end(), "one\ntwo\n");
}

TEST(TargetOutput, KeepsTheFirstAndLastBytesAndCountsTheRest) {
  TargetOutput output;
  const std::string first(kKept, 'a');
  const std::string middle(3 * kKept + 5, 'b');
  output.append(first.data(), first.size());
  output.append(middle.data(), middle.size());
  output.append("last\n", 5);
  EXPECT_EQ(output.head, first);
  EXPECT_EQ(output.tail, std::string(kKept - 5, 'b') + "last\n");
  EXPECT_EQ(output.written, 4 * kKept + 10);
  EXPECT_EQ(output.dropped(), 2 * kKept + 10);
  EXPECT_EQ(output.end(), output.tail);
}

// A write that spans head and tail, in one piece or in many small ones,
// keeps the same bytes.
TEST(TargetOutput, WritesOfAnySizeKeepTheSameBytes) {
  std::string text;
  for (std::size_t i = 0; i < 3 * kKept; ++i)
    text.push_back(static_cast<char>('a' + i % 26));
  TargetOutput whole;
  whole.append(text.data(), text.size());
  TargetOutput pieces;
  for (std::size_t at = 0; at < text.size(); at += 7)
    pieces.append(text.data() + at, std::min<std::size_t>(7, text.size() - at));
  EXPECT_EQ(whole, pieces);
  EXPECT_EQ(whole.head, text.substr(0, kKept));
  EXPECT_EQ(whole.tail, text.substr(2 * kKept));
  EXPECT_EQ(whole.dropped(), kKept);
  // Nothing dropped yet: head and tail are one run of bytes.
  TargetOutput short_one;
  short_one.append(text.data(), kKept + 3);
  EXPECT_EQ(short_one.end(), text.substr(0, kKept + 3));
}

} // namespace
} // namespace cmc::tracer
