// The example plugins of demo/properties on paths made up here: each must
// see the violation it is for, and no violation where the protocol allows.

#include <gtest/gtest.h>

#include "app/plugins/property_plugin.h"

namespace cmc::app {
namespace {

std::string plugin(const std::string &name) {
  return std::string(CMC_DEMO_DIR) + "/properties/" + name + ".so";
}

// A path of one client's steps and what that client received; every state
// is empty (these plugins read only the replies).
struct Script {
  std::vector<executor::PathStep> path;
  std::vector<std::vector<std::string>> received;

  Script &step(executor::ActionId action, std::size_t client,
               const std::string &reply) {
    path.emplace_back(action);
    received.emplace_back(2);
    received.back()[client] = reply;
    return *this;
  }
  [[nodiscard]] std::optional<std::string>
  check(const PluginProperty &property) const {
    const std::vector<std::vector<std::byte>> states(path.size() + 1);
    return property.check_path({path, states, received});
  }
};

std::shared_ptr<tracer::TargetSpec>
two_clients(std::vector<std::string> messages,
            std::vector<std::size_t> client_of) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->messages = std::move(messages);
  spec->clients = {"A", "B"};
  spec->client_of = std::move(client_of);
  spec->disconnect = true;
  return spec;
}

TEST(DemoPlugins, BeanstalkdReserveSeesAJobReservedTwice) {
  // 0 A put, 1 A reserve, 2 B reserve, 3 A release 1, 4 A delete 1,
  // 5 and 6 disconnect A and B.
  const PluginProperty reserve(
      plugin("beanstalkd_reserve"),
      two_clients({"put 0 0 10 1\r\nx\r\n", "reserve-with-timeout 0\r\n",
                   "reserve-with-timeout 0\r\n", "release 1 0 0\r\n",
                   "delete 1\r\n"},
                  {0, 0, 1, 0, 0}),
      {}, CMC_EXECUTABLE);
  Script held;
  held.step(0, 0, "INSERTED 1\r\n").step(1, 0, "RESERVED 1 1\r\nx\r\n");
  EXPECT_FALSE(held.check(reserve));
  Script twice = held;
  twice.step(2, 1, "RESERVED 1 1\r\nx\r\n");
  EXPECT_EQ(twice.check(reserve),
            "beanstalkd-reserve: step 3: job 1 reserved by client B while "
            "client A holds it");
  for (const auto &[action, reply] :
       {std::pair<executor::ActionId, std::string>{3, "RELEASED\r\n"},
        {4, "DELETED\r\n"},
        {5, ""}}) {
    Script given_back = held;
    given_back.step(action, 0, reply).step(2, 1, "RESERVED 1 1\r\nx\r\n");
    EXPECT_FALSE(given_back.check(reserve)) << action;
  }
  // A release that beanstalkd refused gives nothing back.
  Script refused = held;
  refused.step(3, 0, "NOT_FOUND\r\n").step(2, 1, "RESERVED 1 1\r\nx\r\n");
  EXPECT_TRUE(refused.check(reserve));
}

TEST(DemoPlugins, RedisLockSeesASecondSetNx) {
  // 0 A SET NX, 1 A DEL, 2 B SET NX, 3 B UNLINK.
  const PluginProperty lock(
      plugin("redis_lock"),
      two_clients({"SET lock A NX\r\n", "DEL lock\r\n", "SET lock B NX\r\n",
                   "UNLINK lock\r\n"},
                  {0, 0, 1, 1}),
      {}, CMC_EXECUTABLE);
  Script refused;
  refused.step(0, 0, "+OK\r\n").step(2, 1, "$-1\r\n");
  EXPECT_FALSE(refused.check(lock));
  Script deleted;
  deleted.step(0, 0, "+OK\r\n").step(1, 0, ":1\r\n").step(2, 1, "+OK\r\n");
  EXPECT_FALSE(deleted.check(lock));
  Script unlinked;
  unlinked.step(0, 0, "+OK\r\n").step(3, 1, ":1\r\n").step(2, 1, "+OK\r\n");
  EXPECT_EQ(unlinked.check(lock),
            "redis-lock: step 3: SET lock NX succeeded for client B, but "
            "client A holds the lock since step 1");
}

// One unnamed client and the crash step (--crash), the last action.
std::shared_ptr<tracer::TargetSpec>
crashing(std::vector<std::string> messages) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->messages = std::move(messages);
  spec->crash = true;
  return spec;
}

// A crash between an acknowledgement and the read that misses it is the
// violation; the plugin is handed the crash as a step of its own kind.
TEST(DemoPlugins, LogDurableSeesAnAcknowledgedLineLost) {
  const auto spec = crashing({"APPEND a\n", "GET\n"});
  const executor::ActionId crash = spec->crash_action();
  const PluginProperty log(plugin("log_durable"), spec, {}, CMC_EXECUTABLE);
  Script kept;
  kept.step(0, 0, "OK\n").step(crash, 0, "").step(1, 0, "a\nEND\n");
  EXPECT_FALSE(kept.check(log));
  Script lost;
  lost.step(0, 0, "OK\n").step(crash, 0, "").step(1, 0, "END\n");
  EXPECT_EQ(lost.check(log), "log-durable: step 3: GET does not list 'a', "
                             "acknowledged at step 1");
  // An append that failed was never acknowledged.
  Script refused;
  refused.step(0, 0, "ERR\n").step(crash, 0, "").step(1, 0, "END\n");
  EXPECT_FALSE(refused.check(log));
}

TEST(DemoPlugins, BeanstalkdDurableSeesAnInsertedJobLost) {
  const auto spec =
      crashing({"put 0 0 10 1\r\nx\r\n", "peek 1\r\n", "delete 1\r\n"});
  const executor::ActionId crash = spec->crash_action();
  const PluginProperty durable(plugin("beanstalkd_durable"), spec, {},
                               CMC_EXECUTABLE);
  Script lost;
  lost.step(0, 0, "INSERTED 1\r\n")
      .step(crash, 0, "")
      .step(1, 0, "NOT_FOUND\r\n");
  EXPECT_EQ(lost.check(durable),
            "beanstalkd-durable: step 3: peek 1 is NOT_FOUND, a job "
            "acknowledged (INSERTED) at step 1");
  Script deleted;
  deleted.step(0, 0, "INSERTED 1\r\n")
      .step(2, 0, "DELETED\r\n")
      .step(1, 0, "NOT_FOUND\r\n");
  EXPECT_FALSE(deleted.check(durable));
}

TEST(DemoPlugins, RedisDurableSeesAnAcknowledgedSetLost) {
  const auto spec = crashing({"SET k v\r\n", "GET k\r\n", "DEL k\r\n"});
  const executor::ActionId crash = spec->crash_action();
  const PluginProperty durable(plugin("redis_durable"), spec, {},
                               CMC_EXECUTABLE);
  Script lost;
  lost.step(0, 0, "+OK\r\n").step(crash, 0, "").step(1, 0, "$-1\r\n");
  EXPECT_EQ(lost.check(durable),
            "redis-durable: step 3: GET k has no value, a SET acknowledged "
            "(+OK) at step 1");
  Script kept;
  kept.step(0, 0, "+OK\r\n").step(crash, 0, "").step(1, 0, "$1\r\nv\r\n");
  EXPECT_FALSE(kept.check(durable));
  Script deleted;
  deleted.step(0, 0, "+OK\r\n").step(2, 0, ":1\r\n").step(1, 0, "$-1\r\n");
  EXPECT_FALSE(deleted.check(durable));
}

} // namespace
} // namespace cmc::app
