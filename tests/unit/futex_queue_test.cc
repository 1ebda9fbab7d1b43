// cmc's futexes and its rule for which thread runs next
// (tracer/schedule/).

#include "tracer/schedule/futex_queue.h"

#include <gtest/gtest.h>

#include <vector>

#include "tracer/schedule/run_order.h"

namespace cmc::tracer {
namespace {

constexpr std::uint64_t kWord = 0x1000;
constexpr std::uint64_t kOther = 0x2000;

TEST(FutexQueue, AWakeTakesTheLongestWaitingOfItsWordFirst) {
  FutexQueue queue;
  queue.wait(11, {.address = kWord});
  queue.wait(12, {.address = kOther});
  queue.wait(13, {.address = kWord});
  queue.wait(14, {.address = kWord});
  EXPECT_EQ(queue.wake({.address = kWord, .count = 2}).woken,
            (std::vector<pid_t>{11, 13}));
  EXPECT_EQ(queue.wake({.address = kWord, .count = 5}).woken,
            std::vector<pid_t>{14});
  EXPECT_TRUE(queue.wake({.address = kWord, .count = 1}).woken.empty());
  ASSERT_EQ(queue.entries().size(), 1U);
  EXPECT_EQ(queue.entries()[0].tid, 12);
}

TEST(FutexQueue, AWakeTakesOnlyWaitersWhoseBitsetItShares) {
  FutexQueue queue;
  queue.wait(11, {.address = kWord, .bitset = 0b01});
  queue.wait(12, {.address = kWord, .bitset = 0b10});
  EXPECT_EQ(queue.wake({.address = kWord, .bitset = 0b10, .count = 2}).woken,
            std::vector<pid_t>{12});
}

TEST(FutexQueue, ARequeueMovesTheRestToTheEndOfTheOtherWord) {
  FutexQueue queue;
  queue.wait(11, {.address = kWord});
  queue.wait(12, {.address = kWord});
  queue.wait(13, {.address = kWord});
  queue.wait(14, {.address = kOther});
  const auto moved = queue.wake(
      {.address = kWord, .count = 1, .requeue_to = kOther, .requeue_count = 1});
  EXPECT_EQ(moved.woken, std::vector<pid_t>{11});
  EXPECT_EQ(moved.requeued, 1);
  // 12 now waits on kOther, after 14; 13 stays.
  EXPECT_EQ(queue.wake({.address = kOther, .count = 2}).woken,
            (std::vector<pid_t>{14, 12}));
  EXPECT_EQ(queue.wake({.address = kWord, .count = 2}).woken,
            std::vector<pid_t>{13});
}

TEST(FutexQueue, ACancelledWaiterIsNotWoken) {
  FutexQueue queue;
  queue.wait(11, {.address = kWord});
  queue.wait(12, {.address = kWord});
  queue.cancel(11);
  EXPECT_EQ(queue.wake({.address = kWord, .count = 1}).woken,
            std::vector<pid_t>{12});
}

TEST(RunOrder, TheNextAfterTheOneThatRanWrappingRound) {
  const std::vector<std::size_t> runnable{0, 2, 3};
  EXPECT_EQ(next_to_run(runnable, std::nullopt), 0U);
  EXPECT_EQ(next_to_run(runnable, 0), 2U);
  EXPECT_EQ(next_to_run(runnable, 1), 2U);
  EXPECT_EQ(next_to_run(runnable, 3), 0U);
  EXPECT_EQ(next_to_run({}, 3), std::nullopt);
}

} // namespace
} // namespace cmc::tracer
