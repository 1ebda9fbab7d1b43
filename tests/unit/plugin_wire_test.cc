#include "app/plugins/plugin_wire.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string_view>

namespace cmc::app {
namespace {

std::string text(cmc_bytes bytes) {
  return {reinterpret_cast<const char *>(bytes.data), bytes.size};
}

cmc_bytes bytes(std::string_view text) {
  return {reinterpret_cast<const unsigned char *>(text.data()), text.size()};
}

using std::string_view_literals::operator""sv;

// Two clients, a two-byte region, a send by B and a tick.
struct TwoSteps {
  std::array<const char *, 2> clients{"A", "B"};
  cmc_region region{"cmc_state", 0, 2};
  std::array<std::array<cmc_bytes, 2>, 2> received{
      {{bytes(""), bytes("OK\n")}, {bytes(""), bytes("")}}};
  std::array<cmc_step, 2> steps{
      {{CMC_STEP_SEND, 1, bytes("SET a\n"), bytes("OK\n"), received[0].data(),
        bytes("\x00\x00"sv), bytes("\x01\x00"sv)},
       {CMC_STEP_TICK,
        0,
        {},
        {},
        received[1].data(),
        bytes("\x01\x00"sv),
        bytes("\x01\x02"sv)}}};
  cmc_path path{2, clients.data(), 1, &region, 2, steps.data()};
};

TEST(PluginWire, APathArrivesWhole) {
  const TwoSteps sent;
  const std::string frame = encode_path(sent.path);
  std::uint64_t size = 0;
  std::memcpy(&size, frame.data(), sizeof size);
  ASSERT_EQ(size, frame.size() - sizeof size);
  const auto decoded = DecodedPath::decode(std::string_view(frame).substr(8));
  ASSERT_TRUE(decoded) << decoded.error().message;
  const cmc_path path = decoded->view();
  ASSERT_EQ(path.client_count, 2U);
  EXPECT_STREQ(path.clients[1], "B");
  ASSERT_EQ(path.region_count, 1U);
  EXPECT_STREQ(path.regions[0].name, "cmc_state");
  EXPECT_EQ(path.regions[0].size, 2U);
  ASSERT_EQ(path.step_count, 2U);
  EXPECT_EQ(path.steps[0].kind, CMC_STEP_SEND);
  EXPECT_EQ(path.steps[0].client, 1U);
  EXPECT_EQ(text(path.steps[0].message), "SET a\n");
  EXPECT_EQ(text(path.steps[0].response), "OK\n");
  EXPECT_EQ(text(path.steps[0].received[1]), "OK\n");
  EXPECT_EQ(text(path.steps[0].received[0]), "");
  EXPECT_EQ(text(path.steps[0].before), std::string(2, '\0'));
  EXPECT_EQ(path.steps[1].kind, CMC_STEP_TICK);
  EXPECT_EQ(text(path.steps[1].before), std::string("\x01\x00", 2));
  EXPECT_EQ(text(path.steps[1].after), std::string("\x01\x02", 2));
}

TEST(PluginWire, EveryCutRequestIsRefused) {
  const TwoSteps sent;
  const std::string payload = encode_path(sent.path).substr(8);
  for (std::size_t size = 0; size < payload.size(); ++size)
    EXPECT_FALSE(DecodedPath::decode(payload.substr(0, size))) << size;
  EXPECT_FALSE(DecodedPath::decode(payload + "x"));
}

TEST(PluginWire, OnlyAReplyHeaderIsOne) {
  const std::string frame =
      encode_reply({ReplyStatus::kViolated, "two holders"});
  const auto header =
      decode_reply_header(std::string_view(frame).substr(0, kReplyHeaderSize));
  ASSERT_TRUE(header);
  EXPECT_EQ(header->first, ReplyStatus::kViolated);
  EXPECT_EQ(header->second, 11U);
  EXPECT_EQ(frame.substr(kReplyHeaderSize), "two holders");
  EXPECT_FALSE(decode_reply_header("this is no reply"));
  std::string status = frame.substr(0, kReplyHeaderSize);
  status[4] = 9;
  EXPECT_FALSE(decode_reply_header(status));
  const std::string long_text = encode_reply(
      {ReplyStatus::kViolated, std::string(kViolationSize + 1, 'x')});
  EXPECT_FALSE(decode_reply_header(long_text.substr(0, kReplyHeaderSize)));
}

} // namespace
} // namespace cmc::app
