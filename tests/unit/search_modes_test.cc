// The search's modes that change what a state is: --once (the messages
// taken are part of it), --mask-volatile (some bytes are not).

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "fake_executor.h"
#include "search/breadth_first.h"
#include "search/property.h"
#include "sticky_kv.h"

namespace cmc::search {
namespace {

using executor::ActionId;
using executor::Fault;
using executor::PathStep;
using fake::Bytes;
using fake::FakeSystem;
using fake::StepOutcome;
using kv::check;
using kv::error_of;
using kv::set_cell;
using kv::zeros;

using kv::kCells;
// kv's two cells and two bytes of a clock the target reads uncontrolled.
const std::vector<RegionLayout> kCellsAndClock = {{"cmc_state", 0, 2},
                                                  {"clock", 2, 2}};

Options once_over(std::size_t messages) {
  Options options;
  options.once_actions = messages;
  return options;
}

// [] -> [0] and [1] new; [0] tries only 1, [1] only 0: both reach cells
// {a, b} with messages {0, 1} taken, the second merges; that state has no
// step left. 4 states, 1 merge, 4 transitions (8 without --once).
TEST(Once, KvDiamond) {
  FakeSystem kv(zeros(2), set_cell);
  const Result<Report> report = check(kv, 2, kCells, once_over(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kHolds);
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 1U);
  EXPECT_EQ(report->transitions, 4U);
  EXPECT_EQ(report->max_depth, 2U);
  EXPECT_EQ(kv.runs(), 2U + 4U);
}

// Messages 0 and 1 both set the cell; message 0 crashes the target when
// it is set already. [0] and [1] have equal bytes but differ in what is
// left to send: [1] may still send 0 and crash. Merging them by their
// bytes would hide the crash (a false pass): the messages taken are part
// of the state.
TEST(Once, MessagesTakenArePartOfTheState) {
  const auto step = [](const Bytes &state, ActionId action) -> StepOutcome {
    if (action == 0 && state[0] == std::byte{1})
      return Fault{.kind = Fault::Kind::kSignal, .code = SIGSEGV, .step = 0};
    Bytes next = state;
    next[0] = std::byte{1};
    return next;
  };
  FakeSystem system(zeros(1), step);
  const Result<Report> report =
      check(system, 2, {{"cell", 0, 1}}, once_over(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_EQ(report->verdict, Verdict::kViolated);
  EXPECT_EQ(report->counterexample, (std::vector<PathStep>{1, 0}));
  // [], [0], [1] and [0, 1]; [1, 0] crashes.
  EXPECT_EQ(report->distinct_states, 4U);
  EXPECT_EQ(report->dedup_merges, 0U);
  EXPECT_EQ(report->transitions, 4U);
}

// Action 2 is no message (a disconnect, a tick): --once leaves it usable
// on every path. Each of the 4 states tries it and merges into itself.
TEST(Once, OtherStepsStayUsable) {
  FakeSystem kv(zeros(2), set_cell);
  const Result<Report> report = check(kv, 3, kCells, once_over(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->distinct_states, 4U);
  // [] 3, [0] 2, [1] 2, [0, 1] 1; 3 of them new.
  EXPECT_EQ(report->transitions, 8U);
  EXPECT_EQ(report->dedup_merges, 5U);
}

Options masking(unsigned jobs = 1) {
  Options options;
  options.mask_volatile = true;
  options.jobs = jobs;
  return options;
}

void expect_kv_diamond(const Report &report) {
  EXPECT_EQ(report.verdict, Verdict::kHolds);
  EXPECT_TRUE(report.complete);
  EXPECT_EQ(report.distinct_states, 4U);
  EXPECT_EQ(report.dedup_merges, 5U);
  EXPECT_EQ(report.transitions, 8U);
}

TEST(MaskVolatile, InitialStateBytesAreMasked) {
  FakeSystem kv(zeros(4), set_cell);
  kv.set_noise([](std::size_t run, std::size_t, Bytes &state) {
    state[3] = static_cast<std::byte>(run);
  });
  const Result<Report> report = check(kv, 2, kCellsAndClock, masking());
  ASSERT_TRUE(report.ok()) << error_of(report);
  expect_kv_diamond(*report);
  EXPECT_EQ(report->masked, (std::vector<std::string>{"clock+1"}));
  EXPECT_EQ(report->restarts, 1U);
  // 2 runs find the byte, 2 more agree on the masked initial state, then
  // one per transition.
  EXPECT_EQ(kv.runs(), 2U + 2U + 8U);
}

// The clock is written at the first message: [0] and [1] are recorded
// with it, and the first replay of [0] at depth 2 shows it.
TEST(MaskVolatile, LaterBytesRestartTheSearch) {
  const auto clock = [](std::size_t run, std::size_t depth, Bytes &state) {
    if (depth >= 1)
      state[2] = static_cast<std::byte>(run);
  };
  std::vector<Report> reports;
  for (const unsigned jobs : {1U, 8U}) {
    FakeSystem kv(zeros(4), set_cell);
    kv.set_noise(clock);
    const Result<Report> report = check(kv, 2, kCellsAndClock, masking(jobs));
    ASSERT_TRUE(report.ok()) << error_of(report);
    expect_kv_diamond(*report);
    EXPECT_EQ(report->masked, (std::vector<std::string>{"clock+0"}));
    EXPECT_EQ(report->restarts, 1U);
    if (jobs == 1) {
      // [] twice, [0] and [1], the 4 of depth 2, [0] twice to name the
      // byte; then the search again: [] twice and 8 transitions.
      EXPECT_EQ(kv.runs(), 2U + 2U + 4U + 2U + 2U + 8U);
    }
  }
}

// A second clock byte shows only from depth 2 on: two restarts.
TEST(MaskVolatile, EachNewByteRestartsAgain) {
  FakeSystem kv(zeros(4), set_cell);
  kv.set_noise([](std::size_t run, std::size_t depth, Bytes &state) {
    if (depth >= 1)
      state[2] = static_cast<std::byte>(run);
    if (depth >= 2)
      state[3] = static_cast<std::byte>(run);
  });
  const Result<Report> report = check(kv, 2, kCellsAndClock, masking(2));
  ASSERT_TRUE(report.ok()) << error_of(report);
  expect_kv_diamond(*report);
  EXPECT_EQ(report->masked, (std::vector<std::string>{"clock+0", "clock+1"}));
  EXPECT_EQ(report->restarts, 2U);
}

// The clock byte is 1 after one step, and after two it is 0 in even runs:
// the first run of [0, 0] breaks sticky on it. Only the volatile byte
// shows that "violation", so with the mask it is none.
TEST(MaskVolatile, AViolationOnlyVolatileBytesShowIsNone) {
  const auto clock = [](std::size_t run, std::size_t depth, Bytes &state) {
    if (depth == 1)
      state[2] = std::byte{1};
    if (depth == 2)
      state[2] = static_cast<std::byte>(run % 2);
  };
  FakeSystem masked(zeros(4), set_cell);
  masked.set_noise(clock);
  const Result<Report> report = check(masked, 2, kCellsAndClock, masking());
  ASSERT_TRUE(report.ok()) << error_of(report);
  expect_kv_diamond(*report);
  EXPECT_EQ(report->masked, (std::vector<std::string>{"clock+0"}));

  FakeSystem unmasked(zeros(4), set_cell);
  unmasked.set_noise(clock);
  const Result<Report> plain = check(unmasked, 2, kCellsAndClock, Options{});
  ASSERT_TRUE(plain.ok()) << error_of(plain);
  EXPECT_EQ(plain->violation, "sticky: byte 0 of clock went 01 -> 00");
}

// A pid's second byte: the two runs that record the initial state agree on
// it, and every later run has another value. Only the bytes recorded then
// show which byte it is: the later runs all agree with each other.
TEST(MaskVolatile, ByteThatOnlyTheRecordingRunsShowed) {
  FakeSystem kv(zeros(4), set_cell);
  kv.set_noise([](std::size_t run, std::size_t, Bytes &state) {
    state[3] = std::byte{run < 2 ? std::uint8_t{1} : std::uint8_t{2}};
  });
  const Result<Report> report = check(kv, 2, kCellsAndClock, masking());
  ASSERT_TRUE(report.ok()) << error_of(report);
  expect_kv_diamond(*report);
  EXPECT_EQ(report->masked, (std::vector<std::string>{"clock+1"}));
  EXPECT_EQ(report->restarts, 1U);
}

// Without the option nothing is masked: the check stops naming the byte.
TEST(MaskVolatile, WithoutTheOptionTheCheckStops) {
  FakeSystem kv(zeros(4), set_cell);
  kv.set_noise([](std::size_t run, std::size_t, Bytes &state) {
    state[3] = static_cast<std::byte>(run);
  });
  EXPECT_EQ(error_of(check(kv, 2, kCellsAndClock, Options{})),
            "nondeterminism: the initial state differs between two runs at "
            "clock+1 (uninitialised memory or an uncontrolled clock?); "
            "--mask-volatile masks such bytes and lists them");
}

} // namespace
} // namespace cmc::search
