// Several clients, each on a connection of its own: demo/lock_server,
// whose -DBUG build lets a client unlock a lock it does not hold.

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

std::vector<std::string> lock_check(const std::string &server,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",   "-q",          "--client",  "A",         "-m",
      "LOCK\\n", "-m",          "UNLOCK\\n", "--client",  "B",
      "-m",      "LOCK\\n",     "-m",        "UNLOCK\\n", "--region",
      "held",    "--invariant", "exclusive", "--json",    "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", demo(server), "7000"});
  return args;
}

class Clients : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(Clients, TheCorrectLockServerHolds) {
  const Outcome run = run_cmc(lock_check("lock_server"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  // Which clients are connected is part of the state: 8 states.
  EXPECT_EQ(json["distinct_states"], 8);
  EXPECT_EQ(json["transitions"], 32);
}

TEST_F(Clients, TheBugNeedsTwoClients) {
  const Outcome run = run_cmc(lock_check("lock_server_bug"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["violation"],
            "exclusive: byte 0 of held and byte 1 of held are both set");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"client": "A", "send": "LOCK\n"},
                                      {"client": "B", "send": "UNLOCK\n"},
                                      {"client": "B", "send": "LOCK\n"}])"));
  EXPECT_EQ(json["replay"]["clients"], nlohmann::json::parse(R"(["A","B"])"));
  // With one client the same messages find nothing.
  const Outcome one = run_cmc(
      {"check", "-q", "-m", "LOCK\\n", "-m", "UNLOCK\\n", "--region", "held",
       "--invariant", "exclusive", "--", demo("lock_server_bug"), "7000"});
  EXPECT_EQ(one.status, 0) << one.out << one.err;
}

TEST_F(Clients, TheCounterexampleReplaysFromTheReportAndByHand) {
  const std::string report =
      (std::filesystem::temp_directory_path() /
       ("cmc-clients-" + std::to_string(getpid()) + ".json"))
          .string();
  auto args = lock_check("lock_server_bug");
  *std::find(args.begin(), args.end(), "-") = report;
  const Outcome check = run_cmc(args);
  ASSERT_EQ(check.status, 1) << check.err;
  const Outcome replay = run_cmc({"replay", "--from", report});
  std::filesystem::remove(report);
  EXPECT_EQ(replay.status, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("step 3: B: send \"LOCK\\n\""), std::string::npos)
      << replay.out;
  EXPECT_NE(check.out.find("replay it: cmc replay --client A --client B "
                           "--region held --invariant exclusive --steps "
                           "'A:LOCK\\n' 'B:UNLOCK\\n' 'B:LOCK\\n' --"),
            std::string::npos)
      << check.out;
  const Outcome by_hand = run_cmc(
      {"replay", "--client", "A", "--client", "B", "--region", "held",
       "--invariant", "exclusive", "--steps", "A:LOCK\\n", "B:UNLOCK\\n",
       "B:LOCK\\n", "--", demo("lock_server_bug"), "7000"});
  EXPECT_EQ(by_hand.status, 1) << by_hand.err;
}

// A disconnect closes the client's connection (the server reads end of
// file); the client's next message connects again.
TEST_F(Clients, ADisconnectIsAStepOfItsOwn) {
  const Outcome replay =
      run_cmc({"replay", "--client", "A", "--client", "B", "--region", "held",
               "--steps", "A:LOCK\\n", "A:disconnect", "B:LOCK\\n", "--",
               demo("lock_server"), "7000"});
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("step 2: A: disconnect\n"), std::string::npos);
  EXPECT_NE(replay.out.find("changed: held+0 02 -> 00\nstep 3"),
            std::string::npos)
      << replay.out;
  const Outcome check = run_cmc(lock_check("lock_server", {"--disconnect"}));
  ASSERT_EQ(check.status, 0) << check.err;
  // Two more actions: 6 per state.
  const auto json = check.json();
  EXPECT_EQ(json["transitions"].get<int>(),
            6 * json["distinct_states"].get<int>());
}

TEST_F(Clients, AForbiddenResponseIsAViolation) {
  const Outcome run =
      run_cmc(lock_check("lock_server", {"--forbid-response", "NOT HELD"}));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["violation"],
            "forbidden response: \"NOT HELD\\n\" matches /NOT HELD/");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"client": "A", "send": "UNLOCK\n"}])"));
  EXPECT_EQ(
      run_cmc(lock_check("lock_server", {"--forbid-response", "ERR"})).status,
      0);
  const Outcome bad =
      run_cmc(lock_check("lock_server", {"--forbid-response", "(("}));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("cmc: bad --forbid-response '((': "),
            std::string::npos)
      << bad.err;
}

// A server that keeps its client's address: an ephemeral port would differ
// between two runs of one path (nondeterminism); cmc's end of each
// connection has the same port in every run.
TEST_F(Clients, TheTargetSeesTheSamePeerInEveryRun) {
  const Outcome run = run_cmc({"check", "-q", "-j", "2", "-m", "SET a\\n", "-m",
                               "SET b\\n", "--region", "peer_port", "--json",
                               "-", "--", target("misbehave"), "peer", "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["transitions"], 2);
}

TEST_F(Clients, AMessageBeforeAnyClientIsAUsageError) {
  const Outcome run =
      run_cmc({"check", "-m", "LOCK\\n", "--client", "A", "-m", "UNLOCK\\n",
               "--region", "held", "--", demo("lock_server"), "7000"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "cmc: with --client, every -m follows the --client it "
                     "belongs to\n");
  EXPECT_EQ(run_cmc({"check", "-m", "LOCK\\n", "--disconnect", "--region",
                     "held", "--", demo("lock_server"), "7000"})
                .status,
            2);
}

} // namespace
} // namespace cmc::testing
