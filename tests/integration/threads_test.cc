// Threaded targets (tests/integration/targets/threads.c): a worker thread
// woken for every message, an idle helper parked on a futex for good, a
// worker waiting with a timeout on the virtual clock, and a deadlock.

#include <sstream>

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

Outcome check_threads(const std::string &mode,
                      std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "check",    "-q",        "-m",          "SET a\\n", "-m",     "SET b\\n",
      "--region", "cmc_state", "--invariant", "sticky",   "--json", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("threads"), mode, "7000"});
  return run_cmc(args);
}

class Threads : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

TEST_F(Threads, AStepEndsWhenTheWokenWorkerParksAgain) {
  // The main thread hands each message to the worker and waits for it;
  // the reply and the cell come from the worker. Any step that ended
  // before the worker was done would show as nondeterminism (exit 3) or
  // as the wrong states.
  const Outcome run = check_threads("pool");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
}

TEST_F(Threads, ATimedWaitOfAWorkerRunsOnTheVirtualClock) {
  // Without ticks the worker's 5 s timeout never passes: kv's 4 states.
  const Outcome still = check_threads("timed");
  ASSERT_EQ(still.status, 0) << still.err;
  EXPECT_EQ(still.json()["distinct_states"], 4);
  // A 5 s tick times the wait out (cmc_state[2]) and the worker waits
  // again until 5 s later. With up to two ticks a path's state is its
  // cells (4) and its number of ticks (0-2), which decides cmc_state[2]
  // and the worker's deadline: 12 states. The 8 with fewer than two ticks
  // try 3 actions, the other 4 the two messages: 32 transitions.
  const Outcome ticked =
      check_threads("timed", {"--tick", "5s", "--max-ticks", "2"});
  ASSERT_EQ(ticked.status, 0) << ticked.err;
  const auto json = ticked.json();
  EXPECT_EQ(json["distinct_states"], 12);
  EXPECT_EQ(json["transitions"], 32);
  EXPECT_EQ(json["dedup_merges"], 21);
}

TEST_F(Threads, EveryThreadWaitingOnAFutexIsADeadlock) {
  // JOIN: the main thread joins the worker, which waits for a job that
  // can no longer come. Found at once, not after the step timeout.
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "JOIN\\n", "--region",
               "cmc_state", "--json", "-", "--step-timeout", "60", "--",
               target("threads"), "deadlock", "7000"});
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "JOIN\n"}])"));
  EXPECT_EQ(json["violation"],
            "target deadlocked (every thread waits on a futex, which no "
            "thread is left to wake) during step 1");
}

TEST_F(Threads, AMainThreadEndingWhileOthersRunIsNamedNotAHang) {
  // Its end is not reported while its threads run on, and its memory is
  // the process's for cmc: one error line at once, not the step timeout.
  const Outcome orphan = check_threads("orphan");
  ASSERT_EQ(orphan.status, 3) << orphan.err;
  EXPECT_TRUE(has(orphan.err, "main thread ended (pthread_exit) while its "
                              "other threads run on"))
      << orphan.err;
  EXPECT_EQ(count_of(orphan.err, "\n"), 1U) << orphan.err;
}

// arena_pool: three workers that malloc, so their chunks live in glibc's
// thread arenas (heaps mmap'd at 64 MiB-aligned addresses), beside their
// stacks. The whole process is the state: the chunks are numbered from
// the roots whichever arena holds them, the arenas' heaps and the stacks
// named by role, so ADD a, ADD b and ADD b, ADD a merge, and the kernel's
// choice of addresses (--aslr) changes nothing.
Outcome check_arena_pool(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check",    "-q", "--max-depth", "3",      "-m",
                                "ADD a\\n", "-m", "ADD b\\n",    "--json", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("arena_pool"), "7000"});
  return run_cmc(args);
}

// The bytes a nondeterminism error names: "differs between two runs at
// A+1, B+2, 3 more (...)", or "between runs at" (now and then), or
// "between workers at".
std::vector<std::string> named_bytes(const std::string &error) {
  const auto between = error.find("differs between ");
  const std::string at = " at ";
  const auto start =
      between == std::string::npos ? between : error.find(at, between);
  const auto end = error.find(" (", start);
  std::vector<std::string> names;
  if (start == std::string::npos || end == std::string::npos)
    return names;
  std::stringstream list(
      error.substr(start + at.size(), end - start - at.size()));
  for (std::string name; std::getline(list >> std::ws, name, ',');)
    if (!name.ends_with(" more"))
      names.push_back(name);
  return names;
}

TEST_F(Threads, ThreadArenasAreCanonicalWhereverTheKernelPutsThem) {
  const Outcome fixed = check_arena_pool();
  ASSERT_EQ(fixed.status, 0) << fixed.err;
  const auto json = fixed.json();
  // The tallies (a, b) with a + b <= 3: 10 states. ADD a, ADD b merges
  // with ADD b, ADD a (whichever worker did the jobs, in whichever arena
  // it allocated), and at depth 3 aab with aba, abb with bba.
  EXPECT_EQ(json["distinct_states"], 10);
  EXPECT_EQ(json["transitions"], 12);
  EXPECT_EQ(json["dedup_merges"], 3);
  EXPECT_EQ(json["heap"]["allocator"], "glibc");
  // The last new state's heap: main_arena and the arenas of the workers
  // that took a job on its path.
  EXPECT_GE(json["heap"]["arenas"], 2);

  // With the kernel's addresses random, the workers' arenas and stacks,
  // the mappings and the mangled pointers in setjmp buffers hash alike;
  // what may still differ is the main thread's stack, whose unused bytes
  // glibc's code leaves differently when addresses change.
  const Outcome moved = check_arena_pool({"--aslr"});
  if (moved.status == 0) {
    EXPECT_EQ(moved.json()["distinct_states"], 10);
    EXPECT_EQ(moved.json()["dedup_merges"], 3);
    return;
  }
  ASSERT_EQ(moved.status, 3) << moved.err;
  const auto named = named_bytes(moved.err);
  EXPECT_FALSE(named.empty()) << moved.err;
  for (const std::string &name : named)
    EXPECT_TRUE(name.starts_with("stack of thread 1+")) << moved.err;
}

// misbehave churn: threads start and end on every message, some joined,
// some ending while the main thread already waits for the next one. Each
// check replays many paths, each path starts a target: a thread that ends
// between waitpid and cmc's next request about it (PTRACE_GETREGS,
// /proc/PID/task/TID) must never abort the check (exit 3).
constexpr int kChurnRuns = 8;

Outcome check_churn(const std::vector<std::string> &messages,
                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"check", "-q", "--json", "-", "-j", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  for (const std::string &message : messages)
    args.insert(args.end(), {"-m", message});
  args.insert(args.end(), {"--region", "cmc_state", "--invariant", "sticky",
                           "--", target("misbehave"), "churn", "7000"});
  return run_cmc(args);
}

TEST_F(Threads, ThreadsThatStartAndEndAllTheTimeAreChecked) {
  // Each check runs 8 paths, each message of them starting 8 threads.
  for (int run = 0; run < kChurnRuns / 2; ++run) {
    const Outcome checked = check_churn({"SET a\\n", "SET b\\n"});
    ASSERT_EQ(checked.status, 0) << "run " << run << ": " << checked.err;
    const auto json = checked.json();
    EXPECT_EQ(json["verdict"], "holds");
    EXPECT_EQ(json["distinct_states"], 4);
  }
}

TEST_F(Threads, ATargetEndingWhileItsThreadsStopIsItsDeath) {
  // Before QUIT and CRASH the target starts threads that stop in system
  // calls without end: the process ends while cmc handles their stops,
  // and each of them is gone when cmc asks about it.
  for (int run = 0; run < kChurnRuns; ++run) {
    const Outcome quit = check_churn({"SET a\\n", "QUIT\\n"});
    ASSERT_EQ(quit.status, 1) << "run " << run << ": " << quit.err;
    EXPECT_EQ(quit.json()["counterexample"],
              nlohmann::json::parse(R"([{"send": "QUIT\n"}])"));
    EXPECT_EQ(quit.json()["violation"],
              "target exited with status 0 during step 1");
    const Outcome crash = check_churn({"SET a\\n", "CRASH\\n"});
    ASSERT_EQ(crash.status, 1) << "run " << run << ": " << crash.err;
    EXPECT_EQ(crash.json()["violation"],
              "target killed by SIGSEGV during step 1; it last wrote "
              "\"misbehave: crashing on purpose\"");
  }
}

TEST_F(Threads, AThreadSpinningWhileOthersCouldRunIsNamedNotAHang) {
  // SPIN: the main thread spins with no system call while the churn's
  // threads could run. cmc runs one thread at a time and switches only at
  // system calls, so it cannot tell a hang of the target from one of its
  // scheduler's: exit 3 naming the thread, in every run, never a verdict
  // (the watchdog's kill races with the threads' stops, as before).
  for (int run = 0; run < kChurnRuns; ++run) {
    const Outcome spin =
        check_churn({"SET a\\n", "SPIN\\n"}, {"--step-timeout", "0.5"});
    ASSERT_EQ(spin.status, 3) << "run " << run << ": " << spin.err;
    EXPECT_NE(spin.err.find("thread 0 ran for the whole step timeout without "
                            "a system call"),
              std::string::npos)
        << spin.err;
  }
}

} // namespace
} // namespace cmc::testing
