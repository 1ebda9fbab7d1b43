#include "search/recorded_states.h"

#include <gtest/gtest.h>

#include <vector>

#include "bytes.h"

namespace cmc::search {
namespace {

using testing::bytes;

TEST(RecordedStates, GivesBackEveryStateAsAdded) {
  RecordedStates recorded;
  const std::vector<std::vector<std::byte>> states = {
      bytes({0, 0, 7, 0}), bytes({1, 0, 7, 0}), bytes({1, 2, 0, 3}),
      bytes({0, 0, 7, 0})};
  for (const auto &state : states)
    recorded.add(state);
  for (std::uint32_t i = 0; i < states.size(); ++i)
    EXPECT_EQ(recorded.bytes_of(i), states[i]) << "state " << i;
}

TEST(RecordedStates, ClearStartsFromANewInitialState) {
  RecordedStates recorded;
  recorded.add(bytes({5, 5}));
  recorded.add(bytes({5, 6}));
  recorded.clear();
  recorded.add(bytes({1, 2, 3}));
  recorded.add(bytes({1, 0, 3}));
  EXPECT_EQ(recorded.bytes_of(0), bytes({1, 2, 3}));
  EXPECT_EQ(recorded.bytes_of(1), bytes({1, 0, 3}));
}

} // namespace
} // namespace cmc::search
