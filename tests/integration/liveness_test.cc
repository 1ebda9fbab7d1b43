// Liveness on real targets: tests/integration/targets/red_zone keeps a
// byte in the red zone of the leaf it waits in (inline asm) and reads it
// back after the call, or leaves it there unread (dead).
#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Liveness : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

nlohmann::json red_zone_check(const std::string &mode) {
  const Outcome run = run_cmc({"check", "-q", "--json", "-", "-m", "A\\n", "-m",
                               "B\\n", "--", target("red_zone"), mode, "7000"});
  EXPECT_EQ(run.status, 0) << run.err;
  return run.json();
}

// After A and after B the server differs only in the byte 8 below its
// stack pointer, which its next reply names: three states (the initial
// one, after A, after B), the 8 bytes it reads back kept, the other 120
// of the red zone left out.
TEST_F(Liveness, RedZoneTheLeafReadsBackStaysState) {
  const auto json = red_zone_check("keep");
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["distinct_states"], 3);
  EXPECT_EQ(json["transitions"], 6);
  EXPECT_EQ(json["dead_bytes_per_state"]["red_zones"], 120);
}

// The same bytes left unread after the call are dead: the initial state,
// after A and after B are one state, every byte of the red zone left out,
// and the registers the kernel writes at the call's return (rax, rcx,
// r11). The leaf returns into main, whose loop writes what it reads but
// passes r8 and r9 to its calls (as arguments, by the ABI): of the
// caller-saved registers r10 dies too. main leaves r15 alone, and libc's
// code after main returns (exit) never reads it: r15 dies as well.
TEST_F(Liveness, RedZoneNoCodeReadsIsLeftOut) {
  const auto json = red_zone_check("dead");
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["distinct_states"], 1);
  EXPECT_EQ(json["transitions"], 2);
  EXPECT_EQ(json["dead_bytes_per_state"]["red_zones"], 128);
  EXPECT_EQ(json["dead_bytes_per_state"]["registers"], 40);
}

} // namespace
} // namespace cmc::testing
