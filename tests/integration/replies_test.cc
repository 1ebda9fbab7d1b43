// What belongs to a step: tests/integration/targets/replies answers in two
// small writes (Nagle's algorithm holds the second back), closes the
// connection after each reply, never reads, or reads again only after a
// second.

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Replies : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> replies_check(const std::string &mode, int depth,
                                       const std::string &forbid) {
  std::vector<std::string> args{
      "check", "-q",       "--json",    "-",           "-m",
      "x\\n",  "--region", "cmc_state", "--max-depth", std::to_string(depth)};
  if (!forbid.empty())
    args.insert(args.end(), {"--forbid-response", forbid});
  args.insert(args.end(), {"--", target("replies"), mode, "7000"});
  return args;
}

// The second write of the reply to message 2 waits for cmc's delayed ACK
// of the first; it belongs to step 2 all the same.
TEST_F(Replies, ASplitReplyArrivesInItsOwnStep) {
  const Outcome run = run_cmc(replies_check("split", 2, "ok 2\\nlate 2"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"].size(), 2);
  EXPECT_EQ(json["violation"],
            "forbidden response: \"ok 2\\nlate 2\\n\" matches /ok 2\\nlate 2/");
  // Read whole: no "read" field.
  EXPECT_FALSE(json["counterexample"][1].contains("read"));
}

// Each step's reply holds both parts, at every depth.
TEST_F(Replies, EveryStepHasItsWholeReply) {
  const Outcome run =
      run_cmc({"replay", "--steps", "x\\n", "x\\n", "x\\n", "x\\n", "x\\n",
               "--", target("replies"), "split", "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  for (int i = 1; i <= 5; ++i)
    EXPECT_NE(run.out.find("response: \"ok " + std::to_string(i) + "\\nlate " +
                           std::to_string(i) + "\\n\""),
              std::string::npos)
        << run.out;
  EXPECT_NE(run.out.find("read: 2 of 2 bytes of the message"),
            std::string::npos);
}

// After "bye 1" the server closes; the next message opens a new
// connection, so "bye 2" comes.
TEST_F(Replies, AClosedConnectionIsReopenedByTheNextMessage) {
  const Outcome run = run_cmc(replies_check("close", 3, "bye 2"));
  ASSERT_EQ(run.status, 1) << run.out << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(
                R"([{"send": "x\n", "closed_by_server": [0]},
                    {"send": "x\n", "closed_by_server": [0]}])"));
  const Outcome text = run_cmc(
      {"check", "-q", "-m", "x\\n", "--region", "cmc_state", "--max-depth", "3",
       "--forbid-response", "bye 2", "--", target("replies"), "close", "7000"});
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("1. send \"x\\n\" (closed by the server)"),
            std::string::npos)
      << text.out;
}

// Closed by the server is a state of its own: without a property the
// search goes on through the reopened connections to the bound.
TEST_F(Replies, ClosingServerHoldsAndCountsEveryMessage) {
  const Outcome run = run_cmc(replies_check("close", 3, "bye 4"));
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["coverage"][0]["transitions"], 3);
  EXPECT_EQ(json["coverage"][0]["read_whole"], 3);
  EXPECT_EQ(json["checked"], "properties, crashes, exits and hangs");
}

// A server that closes each connection as it accepts it (rinetd when its
// backend refuses): the connection cmc opens before the first step is
// closed by the server in the initial state, and each message opens
// another, closed before the message could be sent. A step like any whose
// connection the server closed, that read nothing; with clients of their
// own the same.
TEST_F(Replies, AConnectionClosedAtAcceptIsClosedByTheServer) {
  const Outcome run = run_cmc(replies_check("hangup", 3, ""));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  // cmc_state counts the connections: 1 to 4.
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["coverage"][0]["transitions"], 3);
  EXPECT_EQ(json["coverage"][0]["read_whole"], 0);
  const Outcome replay = run_cmc({"replay", "--steps", "x\\n", "x\\n", "--",
                                  target("replies"), "hangup", "7000"});
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(count_of(replay.out, "read: 0 of 2 bytes of the message\n"
                                 "  closed by the server: the client\n"),
            2)
      << replay.out;
  const Outcome clients = run_cmc({"check",    "-q",        "--json",
                                   "-",        "--client",  "A",
                                   "-m",       "x\\n",      "--client",
                                   "B",        "-m",        "y\\n",
                                   "--region", "cmc_state", "--max-depth",
                                   "2",        "--",        target("replies"),
                                   "hangup",   "7000"});
  ASSERT_EQ(clients.status, 0) << clients.err;
  // Which clients the server closed is state: after A, after B; after A
  // twice, B twice, or both (in either order).
  EXPECT_EQ(clients.json()["distinct_states"], 6);
}

// A server that sleeps before reading: the verdict says the message was
// never read, and where the target waited; the bytes waiting in its socket
// grow with every message, so the search ends only at its bound.
TEST_F(Replies, AMessageNeverReadIsInTheVerdict) {
  const Outcome run =
      run_cmc({"check", "-q", "-m", "x\\n", "--region", "cmc_state",
               "--max-depth", "2", "--", target("replies"), "sleep", "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  // Each message waits on top of the last: every depth is a new state.
  EXPECT_TRUE(run.out.starts_with("holds up to depth 2, but message 1 was "
                                  "never read: the target waited in "
                                  "clock_nanosleep: 3 distinct states"))
      << run.out;
  EXPECT_NE(run.out.find("checked crashes, exits and hangs only"),
            std::string::npos);
  const auto json =
      run_cmc(replies_check("sleep", 2, "")).json()["coverage"][0];
  EXPECT_EQ(json["read_whole"], 0);
  EXPECT_EQ(json["waits_in"], "clock_nanosleep");
}

// A server that reads again only a second after its last read (as ngircd
// delays a client's commands): a message sent meanwhile waits in the
// socket. The state after it is not the state before it, though the
// process is the same: after a tick the target reads both waiting
// messages at once. Merged, that read was never seen ("holds").
TEST_F(Replies, BytesLeftUnreadAreState) {
  const Outcome run =
      run_cmc({"check", "-q", "--json", "-", "-m", "x", "--tick", "1s",
               "--max-depth", "4", "--forbid-response", "read 2", "--",
               target("replies"), "penalty", "7000"});
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  ASSERT_EQ(json["counterexample"].size(), 4) << run.out;
  EXPECT_EQ(json["counterexample"][3], nlohmann::json({{"tick", "1s"}}));
  // The last two messages waited: read in the step of the tick.
  EXPECT_EQ(json["counterexample"][1]["read"], 0);
  EXPECT_EQ(json["counterexample"][2]["read"], 0);
}

// The same when the client disconnects: its unread 'x' stays in the
// target's end, read after the tick before the end of file. The states
// after [x, disconnect] and [x, x, disconnect] (the target asleep after
// its first read in both) differ only in it; merged, as cmc did while
// the bytes of a closed connection were no state, the check counts 13
// states (a state fewer) and never takes a step from the second.
TEST_F(Replies, BytesADisconnectedClientLeftUnreadAreState) {
  const Outcome run =
      run_cmc({"check", "-q", "--json", "-", "--client", "a", "-m", "x",
               "--disconnect", "--tick", "1s", "--max-depth", "3", "--",
               target("replies"), "penalty", "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.json()["distinct_states"], 14) << run.out;
}

} // namespace
} // namespace cmc::testing
