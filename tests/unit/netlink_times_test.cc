// The time stamps of NETLINK_ROUTE replies, zeroed so that a target that
// enumerates its addresses reads the same bytes in every run.

#include <gtest/gtest.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "tracer/net/netlink_times.h"

namespace cmc::tracer {
namespace {

// Appends value's bytes, padded to the netlink alignment.
template <typename T>
void append(std::vector<std::byte> &bytes, const T &value) {
  const auto *raw = reinterpret_cast<const std::byte *>(&value);
  bytes.insert(bytes.end(), raw, raw + sizeof value);
  bytes.resize(NLMSG_ALIGN(bytes.size()));
}

// One RTM_NEWADDR message of 127.0.0.1 with its cache info.
std::vector<std::byte> new_address(const ifa_cacheinfo &info) {
  std::vector<std::byte> message;
  append(message, nlmsghdr{});
  append(message, ifaddrmsg{AF_INET, 8, 0x80, RT_SCOPE_HOST, 1});
  append(message, rtattr{RTA_LENGTH(4), IFA_ADDRESS});
  append(message, std::uint32_t{0x0100007f});
  append(message, rtattr{RTA_LENGTH(sizeof info), IFA_CACHEINFO});
  append(message, info);
  nlmsghdr header{static_cast<std::uint32_t>(message.size()), RTM_NEWADDR,
                  NLM_F_MULTI, 1, 0};
  std::memcpy(message.data(), &header, sizeof header);
  return message;
}

TEST(NetlinkTimes, AddressCreationAndUpdateTimesAreZeroed) {
  std::vector<std::byte> bytes =
      new_address({0xffffffff, 0xffffffff, 411748, 411748});
  const std::vector<std::byte> other =
      new_address({0xffffffff, 0xffffffff, 411869, 411869});
  std::vector<std::byte> second = other;
  EXPECT_TRUE(zero_route_times(bytes));
  EXPECT_TRUE(zero_route_times(second));
  EXPECT_EQ(bytes, second);
  EXPECT_FALSE(zero_route_times(bytes)); // nothing left to change
  // The lifetimes stay: permanent.
  EXPECT_EQ(bytes, new_address({0xffffffff, 0xffffffff, 0, 0}));
}

TEST(NetlinkTimes, ATruncatedReplyIsRewrittenAsFarAsItGoes) {
  std::vector<std::byte> bytes = new_address({1, 2, 3, 4});
  bytes.resize(bytes.size() - 4); // MSG_TRUNC cut the cache info short
  const std::vector<std::byte> before = bytes;
  EXPECT_FALSE(zero_route_times(bytes));
  EXPECT_EQ(bytes, before);
}

TEST(NetlinkTimes, LinkStatisticsAreZeroed) {
  std::vector<std::byte> message;
  append(message, nlmsghdr{});
  append(message, ifinfomsg{});
  rtnl_link_stats64 stats{};
  stats.rx_packets = 7;
  stats.tx_bytes = 4242;
  append(message, rtattr{RTA_LENGTH(sizeof stats), IFLA_STATS64});
  append(message, stats);
  nlmsghdr header{static_cast<std::uint32_t>(message.size()), RTM_NEWLINK,
                  NLM_F_MULTI, 1, 0};
  std::memcpy(message.data(), &header, sizeof header);
  EXPECT_TRUE(zero_route_times(message));
  rtnl_link_stats64 after{};
  std::memcpy(&after, message.data() + message.size() - sizeof after,
              sizeof after);
  EXPECT_EQ(after.rx_packets, 0U);
  EXPECT_EQ(after.tx_bytes, 0U);
}

} // namespace
} // namespace cmc::tracer
