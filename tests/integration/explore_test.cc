// cmc explore: scripted sessions from a non-terminal stdin, and one real
// interactive session in a terminal (tmux).

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Explore : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cmc-explore-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
  // cmc explore ARGS with the commands on stdin.
  Outcome explore(const std::vector<std::string> &args,
                  const std::string &commands) {
    const std::string input = (dir_ / "commands").string();
    std::ofstream(input) << commands;
    std::vector<std::string> all{"explore"};
    all.insert(all.end(), args.begin(), args.end());
    return run_cmc_with_input(all, input);
  }
  [[nodiscard]] std::string path(const std::string &name) const {
    return (dir_ / name).string();
  }
  // A copy of a demo of the test's own, so no other test's copy is
  // counted as running.
  [[nodiscard]] std::string copy_of_demo(const std::string &name) const {
    std::filesystem::copy_file(demo(name), path(name));
    return path(name);
  }
  std::filesystem::path dir_;
};

// explore takes replay's strace options: -e trace= and -s.
TEST_F(Explore, TraceOptionsFilterAndCutTheStepsCalls) {
  const Outcome run =
      explore({"-e", "trace=write", "-s", "2", "-m", "SET a\\n", "--region",
               "cmc_state", "--", demo("kv"), "7000"},
              "send 1\nlog\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "  write(4, \"OK\"..., 3) = 3\n")) << run.out;
  EXPECT_FALSE(has(run.out, "read(4")) << run.out;
}

TEST_F(Explore, ACatchStopsAtTheInlineWriteOfAsmKv) {
  const Outcome run = explore(
      {"-m", "SET a\\n", "--region", "cmc_state", "--", demo("asm_kv"), "7000"},
      "catch write\nsend 1\nbt\ncontinue\nstate\nsites\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "caught write(4, \"OK\\n\", 3)")) << run.out;
  EXPECT_TRUE(has(run.out, "(catch 1: write)\n  #0 asm_write+0x")) << run.out;
  EXPECT_TRUE(has(run.out, "(asm_kv.c:")) << run.out;
  EXPECT_TRUE(has(run.out, "  0000  01 00 ")) << run.out;
  EXPECT_TRUE(has(run.out, "asm_read syscall 0 (read) inline observed"));
  EXPECT_TRUE(has(run.out, "asm_write syscall 1 (write) inline observed"));
  EXPECT_FALSE(has(run.out, "never reached")) << run.out;
}

// Time at the catchpoint prompt is the user's: with a step timeout of
// 1 s, a step stopped at a catch for three times as long still ends as
// usual. The wait is what the test is about, not a synchronisation. (At
// 0.2 s a loaded machine took longer than the timeout to start kv.)
TEST_F(Explore, TheStepTimeoutDoesNotRunAtACatchpoint) {
  const std::string fifo = path("commands");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Open for writing first (O_RDWR does not wait for a reader): cmc's
  // stdin is opened before posix_spawn returns.
  const int commands = open(fifo.c_str(), O_RDWR);
  ASSERT_GE(commands, 0);
  const Started started =
      start_cmc({"explore", "--step-timeout", "1", "-m", "SET a\\n", "--region",
                 "cmc_state", "--", demo("kv"), "7000"},
                fifo);
  const std::string first = "catch write\nsend 1\n";
  ASSERT_EQ(write(commands, first.data(), first.size()),
            static_cast<ssize_t>(first.size()));
  std::string out;
  std::array<char, 4096> buffer{};
  while (!has(out, "caught write")) {
    const ssize_t n = read(started.out_fd, buffer.data(), buffer.size());
    ASSERT_GT(n, 0) << out;
    out.append(buffer.data(), static_cast<std::size_t>(n));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string rest = "continue\nstate\nquit\n";
  ASSERT_EQ(write(commands, rest.data(), rest.size()),
            static_cast<ssize_t>(rest.size()));
  close(commands);
  const Outcome run = finish(started);
  out += run.out;
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_FALSE(has(out, "hung")) << out;
  EXPECT_TRUE(has(out, "changed: cmc_state+0 00 -> 01")) << out;
}

TEST_F(Explore, InlineCatchesSkipLibcAndNextStopsAtTheFollowingCall) {
  const Outcome run = explore(
      {"-m", "SET a\\n", "--region", "cmc_state", "--", demo("asm_kv"), "7000"},
      "catch inline\nsend 1\nnext\nregs\ncontinue\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  // The read that returns SET a was entered before the step; the first
  // inline call inside it is the write, and next stops at the read after.
  EXPECT_TRUE(has(run.out, "caught write(4, \"OK\\n\", 3) = ? at 0x"))
      << run.out;
  EXPECT_TRUE(has(run.out, "caught read(4, ")) << run.out;
  EXPECT_TRUE(has(run.out, "  orig_rax 0 (read)")) << run.out;
}

TEST_F(Explore, AVdsoCatchStopsAtTheClockReadOfClockKv) {
  const Outcome run = explore({"-m", "SET a\\n", "--region", "cmc_state", "--",
                               demo("clock_kv"), "7000"},
                              "catch vdso\nsend 1\nbt\ncontinue\nlog\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "caught clock_gettime(CLOCK_REALTIME, 0x"))
      << run.out;
  EXPECT_TRUE(has(run.out, "(catch 1: vdso)\n  #0 __vdso_clock_gettime+0x"))
      << run.out;
  // Past the patched stub: libc's clock_gettime, then kv's own code.
  EXPECT_TRUE(has(run.out, "  #1 clock_gettime")) << run.out;
  EXPECT_TRUE(has(run.out, "  #2 serve+0x")) << run.out;
  EXPECT_TRUE(has(run.out, "(kv.c:")) << run.out;
  EXPECT_TRUE(has(run.out, "= 0  [vDSO __vdso_clock_gettime]\n")) << run.out;
}

TEST_F(Explore, BackResetAndPathReplay) {
  const Outcome run =
      explore({"-m", "SET a\\n", "-m", "SET b\\n", "--region", "cmc_state",
               "--", demo("kv_bug"), "7000"},
              "send 2\nsend 1\npath\nback\nstate\nreset\nstate\nback\n"
              "bogus\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "changed: cmc_state+1 01 -> 00")) << run.out;
  EXPECT_TRUE(has(run.out, "cmc replay --region cmc_state --steps 'SET b\\n' "
                           "'SET a\\n' -- " +
                               demo("kv_bug") + " 7000\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "back at step 1 (replayed)\ncmc_state (2 "
                           "bytes):\n  0000  00 01 "))
      << run.out;
  EXPECT_TRUE(has(run.out, "after 0 steps\nalready at the initial state\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "unknown command 'bogus'; 'help' lists them\n"));
}

// The hex fingerprints `state` printed, in order.
std::vector<std::string> printed_fingerprints(const std::string &out,
                                              const std::string &of) {
  std::vector<std::string> found;
  const std::string word = "fingerprint ";
  for (auto at = out.find(word); at != std::string::npos;
       at = out.find(word, at + 1)) {
    const auto end = out.find(' ', at + word.size());
    found.push_back(out.substr(at + word.size(), end - at - word.size()));
    EXPECT_TRUE(out.compare(end, of.size() + 4, " of " + of) == 0)
        << out.substr(at, 80);
  }
  return found;
}

// Without --region the state is the whole process, as check's: heap_kv's
// SETs malloc the list's nodes, and each changes the fingerprint; a SET
// of a set cell and the other order of two SETs reach states check
// merges, with equal fingerprints. The states seen are check's 4.
TEST_F(Explore, TheStatesFingerprintIsChecksWholeProcess) {
  const std::vector<std::string> target{
      "-m", "SET a\\n", "-m", "SET b\\n", "--", demo("heap_kv"), "7000"};
  const Outcome run =
      explore(target, "state\nsend 1\nstate\nsend 1\nstate\nsend 2\nstate\n"
                      "reset\nsend 2\nstate\nsend 1\nstate\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto seen = printed_fingerprints(run.out, "the whole process");
  ASSERT_EQ(seen.size(), 6U) << run.out;
  const std::string &initial = seen[0];
  const std::string &a = seen[1];
  const std::string &aa = seen[2];
  const std::string &aab = seen[3];
  const std::string &b = seen[4];
  const std::string &ba = seen[5];
  EXPECT_NE(initial, a);
  EXPECT_EQ(a, aa);
  EXPECT_NE(aab, a);
  EXPECT_NE(aab, initial);
  EXPECT_NE(b, initial);
  EXPECT_NE(b, a);
  EXPECT_NE(b, aab);
  EXPECT_EQ(ba, aab);
  std::vector<std::string> check{"check", "-q", "--json", "-"};
  check.insert(check.end(), target.begin(), target.end());
  const auto json = run_cmc(check).json();
  EXPECT_EQ(json["state"], "process");
  EXPECT_EQ(json["distinct_states"],
            std::set<std::string>(seen.begin(), seen.end()).size());
  // With --region the state is the regions, as check's: kv's cells.
  const Outcome regions =
      explore({"-m", "SET a\\n", "-m", "SET b\\n", "--region", "cmc_state",
               "--", demo("kv"), "7000"},
              "state\nsend 1\nstate\nsend 1\nstate\nsend 2\nstate\nquit\n");
  ASSERT_EQ(regions.status, 0) << regions.err;
  const auto cells = printed_fingerprints(regions.out, "the regions");
  ASSERT_EQ(cells.size(), 4U) << regions.out;
  EXPECT_NE(cells[0], cells[1]);
  EXPECT_EQ(cells[1], cells[2]);
  EXPECT_NE(cells[3], cells[1]);
  EXPECT_NE(cells[3], cells[0]);
}

// Without --region the state is the whole process: each step's change
// named, diff between any two states of the path, and state the
// program's live globals.
TEST_F(Explore, DiffAndStateNameTheWholeProcess) {
  const Outcome run =
      explore({"-m", "SET a\\n", "-m", "SET b\\n", "--", demo("kv"), "7000"},
              "send 1\nsend 2\ndiff\ndiff 0 2\nstate\ndiff 3\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string &out = run.out;
  EXPECT_FALSE(has(out, "nothing in the regions")) << out;
  EXPECT_TRUE(has(out, "from the state after 1 step to the one after 2:\n"
                       "  changed: .bss of kv: store+2 00 -> 01\n"
                       "  changed: .bss of kv: cmc_state+1 00 -> 01\n"))
      << out;
  const auto both =
      out.find("from the state after 0 steps to the one after 2:");
  ASSERT_NE(both, std::string::npos) << out;
  // The two cells are one run of changed bytes.
  EXPECT_TRUE(has(out.substr(both),
                  "  changed: .bss of kv: cmc_state+0 00 00 -> 01 01\n"))
      << out;
  EXPECT_TRUE(has(out, "  cmc_state = 01 01\n")) << out;
  EXPECT_TRUE(has(out, "error: diff takes step numbers from 0 to 2: '3'"))
      << out;
}

// heap_kv's cells are heap chunks: state shows them, and its fingerprint
// (check's) changes with the heap.
TEST_F(Explore, TheStateOfHeapKvShowsItsChunksAndItsFingerprintMoves) {
  const Outcome run = explore(
      {"-m", "SET a\\n", "-m", "SET b\\n", "--", demo("heap_kv"), "7000"},
      "state\nsend 1\nstate\nsend 2\nstate\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string &out = run.out;
  EXPECT_TRUE(has(out, "  changed: .bss of heap_kv: cells+0 null -> pointer "
                       "to chunk 1 (new)\n"))
      << out;
  EXPECT_TRUE(has(out, "  cells = &chunk 1\n")) << out;
  EXPECT_TRUE(has(out, "  heap chunk 1 (24 B): &chunk 2 \"a\" 0\n")) << out;
  EXPECT_TRUE(has(out, "  heap chunk 2 (24 B): 0 \"b\" 0\n")) << out;
  std::vector<std::string> fingerprints;
  for (auto at = out.find("fingerprint "); at != std::string::npos;
       at = out.find("fingerprint ", at + 1))
    fingerprints.push_back(out.substr(at + 12, 32));
  ASSERT_EQ(fingerprints.size(), 3U) << out;
  EXPECT_NE(fingerprints[0], fingerprints[1]) << out;
  EXPECT_NE(fingerprints[1], fingerprints[2]) << out;
  EXPECT_NE(fingerprints[0], fingerprints[2]) << out;
}

TEST_F(Explore, ATargetThatDiesEndsOnlyTheRun) {
  const Outcome run =
      explore({"-m", "CRASH\\n", "--", target("misbehave"), "serve", "7000"},
              "send 1\nsend 1\nback\nstate\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "violated: target killed by SIGSEGV during step "
                           "1; it last wrote \"misbehave: crashing on "
                           "purpose\"; 'back' or 'reset' starts the target "
                           "again\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "the target has ended; 'back' or 'reset' starts "
                           "it again\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "back at step 0 (replayed)")) << run.out;
}

// lock_server with clients A and B, each with LOCK and UNLOCK.
std::vector<std::string> lock_clients(const std::string &server) {
  return {"--client",  "A",         "-m",         "LOCK\\n", "-m",
          "UNLOCK\\n", "--client",  "B",          "-m",      "LOCK\\n",
          "-m",        "UNLOCK\\n", "--region",   "held",    "--invariant",
          "exclusive", "--",        demo(server), "7000"};
}

// The `cmc replay` line that path printed, run by the shell; its exit
// status.
int run_path(const std::string &out) {
  const std::string marker = "\ncmc replay ";
  const auto at = out.find(marker);
  if (at == std::string::npos)
    return -1;
  const auto begin = at + marker.size();
  const std::string shell = cmc_binary() + " replay " +
                            out.substr(begin, out.find('\n', begin) - begin) +
                            " > /dev/null";
  return WEXITSTATUS(std::system(shell.c_str()));
}

TEST_F(Explore, NamedClientsBreakTheLockAndThePathReproducesIt) {
  const Outcome run =
      explore(lock_clients("lock_server_bug"),
              "send A:LOCK\\n\nsend B:UNLOCK\\n\nsend B:LOCK\\n\nstate\npath\n"
              "quit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has(run.out, "step 1: A: send \"LOCK\\n\"\n")) << run.out;
  EXPECT_TRUE(has(run.out, "step 2: B: send \"UNLOCK\\n\"\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  response to B: \"OK\\n\"\n  changed: held+0 "
                           "02 -> 01\nstep 3: B: send \"LOCK\\n\"\n"))
      << run.out;
  // A's byte (granted, never released) and B's (granted now): both set.
  EXPECT_TRUE(has(run.out, "held (4 bytes):\n  0000  01 02 00 00 ")) << run.out;
  // --invariant exclusive is checked after each step, as check does.
  EXPECT_TRUE(has(run.out, "changed: held+1 00 -> 02\nviolated: exclusive: "
                           "byte 0 of held and byte 1 of held are both set\n"))
      << run.out;
  EXPECT_EQ(run.out.find("violated:"), run.out.rfind("violated:")) << run.out;
  EXPECT_TRUE(has(run.out, "\ncmc replay --client A --client B --region held "
                           "--invariant exclusive --steps 'A:LOCK\\n' "
                           "'B:UNLOCK\\n' 'B:LOCK\\n' -- " +
                               demo("lock_server_bug") + " 7000\n"))
      << run.out;
  EXPECT_EQ(run_path(run.out), 1);
}

TEST_F(Explore, NumberedMessagesPlainTextAndDisconnectAsClients) {
  const Outcome run =
      explore(lock_clients("lock_server"),
              "send 3\nsend LOCK\\n\ndisconnect B\nsend A:LOCK\\n\nback\npath\n"
              "send 2\nreset\nstate\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  // Message 3 is B's LOCK; B connects first, so its byte is held+0.
  EXPECT_TRUE(has(run.out, "step 1: B: send \"LOCK\\n\"\n")) << run.out;
  EXPECT_TRUE(has(run.out, "response to B: \"OK\\n\"\n  changed: held+0 "
                           "00 -> 02\n"))
      << run.out;
  // A plain text is the first client's.
  EXPECT_TRUE(has(run.out, "step 2: A: send \"LOCK\\n\"\n")) << run.out;
  EXPECT_TRUE(has(run.out, "response to A: \"BUSY\\n\"\n")) << run.out;
  // B's FIN gives the lock up, and A takes it.
  EXPECT_TRUE(has(run.out, "step 3: B: disconnect\n")) << run.out;
  EXPECT_TRUE(has(run.out, "changed: held+0 02 -> 00\nstep 4: A: send"))
      << run.out;
  EXPECT_TRUE(has(run.out, "response to A: \"OK\\n\"\n  changed: held+1 00 "
                           "-> 02\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "back at step 3 (replayed)\ncmc replay --client A "
                           "--client B --region held --invariant exclusive "
                           "--steps 'B:LOCK\\n' 'A:LOCK\\n' B:disconnect --"))
      << run.out;
  // The replayed steps' replies are not taken for the next step's.
  EXPECT_TRUE(has(run.out, "step 4: A: send \"UNLOCK\\n\"\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  response to A: \"NOT HELD\\n\"\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  0000  00 00 00 00 ")) << run.out;
  EXPECT_TRUE(has(run.out, "after 0 steps\n")) << run.out;
  EXPECT_EQ(run_path(run.out), 0);
}

// A plugin sees the whole path of the live run, replies included: on
// lock_server -DBUG the second grant to A breaks lock_grant at step 3, and
// after back the same step on the replayed run breaks it again.
TEST_F(Explore, APluginPropertyIsCheckedAfterEveryStep) {
  const Outcome run =
      explore({"--client", "A", "-m", "LOCK\\n", "-m", "UNLOCK\\n", "--client",
               "B", "-m", "LOCK\\n", "-m", "UNLOCK\\n", "--property",
               plugin("lock_grant"), "--", demo("lock_server_bug"), "7000"},
              "send A:LOCK\\n\nsend B:UNLOCK\\n\nsend A:LOCK\\n\nback\n"
              "send A:LOCK\\n\nquit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string violation =
      "violated: lock-grant: step 3 granted the lock to client A, but client "
      "A holds it since step 1\n";
  const auto first = run.out.find(violation);
  ASSERT_NE(first, std::string::npos) << run.out;
  EXPECT_LT(run.out.find("step 3: A: send"), first) << run.out;
  EXPECT_NE(run.out.find(violation, first + 1), std::string::npos) << run.out;
}

TEST_F(Explore, AnUnknownClientIsOneErrorLineAndTheSessionGoesOn) {
  const Outcome run =
      explore(lock_clients("lock_server"),
              "send C:LOCK\\n\ndisconnect C\nsend A:LOCK\\n\nstate\nhelp\n"
              "quit\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string error = "error: unknown client 'C' (the clients are A, "
                            "B)\n";
  EXPECT_TRUE(has(run.out, "'help' lists the commands\n" + error + error +
                               "step 1: A: send \"LOCK\\n\"\n"))
      << run.out;
  EXPECT_TRUE(has(run.out, "after 1 step\n")) << run.out;
  EXPECT_TRUE(has(run.out, "\ndisconnect CLIENT  close CLIENT's connection"))
      << run.out;
  // Without --client there is no one to name.
  const Outcome one = explore({"-m", "SET a\\n", "--", demo("kv"), "7000"},
                              "disconnect A\nstate\nquit\n");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(has(one.out, "disconnect needs named clients: start explore "
                           "with --client NAME -m ...\n"))
      << one.out;
}

// The live processes running path.
std::vector<pid_t> running(const std::string &path) {
  std::vector<pid_t> found;
  const auto want = std::filesystem::canonical(path);
  for (const auto &entry : std::filesystem::directory_iterator("/proc")) {
    std::error_code error;
    const auto exe = std::filesystem::read_symlink(entry.path() / "exe", error);
    if (!error && exe == want)
      found.push_back(std::stoi(entry.path().filename()));
  }
  return found;
}

// A terminal driven with tmux send-keys; the screen read back with
// capture-pane until it shows what is expected (or 20 s pass).
class Terminal {
public:
  // A tmux server of its own (-L), which becomes this test's child (the
  // test is a subreaper): the destructor stops and reaps it, and the
  // pane's shell, which the server's end leaves to this test too (it would
  // die of the hangup, but perhaps only after the leak check).
  explicit Terminal(const std::string &command)
      : tmux_(fmt::format("tmux -L cmc-test-{}", getpid())) {
    run(fmt::format("{} new-session -d -x 160 -y 50 \"{}\"", tmux_, command));
    server_ = std::stoi(output(tmux_ + " display -p '#{pid}'"));
    pane_ = std::stoi(output(tmux_ + " display -p '#{pane_pid}'"));
  }
  Terminal(const Terminal &) = delete;
  Terminal &operator=(const Terminal &) = delete;
  ~Terminal() {
    run(tmux_ + " kill-server");
    waitpid(server_, nullptr, 0);
    kill(pane_, SIGKILL);
    waitpid(pane_, nullptr, 0);
  }

  void keys(const std::string &keys) const {
    run(fmt::format("{} send-keys {}", tmux_, keys));
  }
  [[nodiscard]] std::string screen() const {
    return output(tmux_ + " capture-pane -p");
  }
  // Polls the screen until it holds part count times.
  [[nodiscard]] bool shows(const std::string &part,
                           std::size_t count = 1) const {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string text = screen();
      std::size_t seen = 0;
      for (auto at = text.find(part); at != std::string::npos;
           at = text.find(part, at + 1))
        ++seen;
      if (seen >= count)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

private:
  static void run(const std::string &command) {
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  static std::string output(const std::string &command) {
    std::string text;
    FILE *pipe = popen(command.c_str(), "r");
    std::array<char, 4096> buffer{};
    while (pipe != nullptr &&
           (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr))
      text += buffer.data();
    if (pipe != nullptr)
      pclose(pipe);
    return text;
  }
  std::string tmux_;
  pid_t server_ = -1;
  pid_t pane_ = -1; // the shell running the command
};

// cmc explore OPTIONS -- TARGET 7000 in a terminal, then the line
// cmc-exited-STATUS when it ends; waits for the prompt.
std::unique_ptr<Terminal> explore_in_terminal(const std::string &options,
                                              const std::string &target) {
  auto terminal = std::make_unique<Terminal>(
      fmt::format("{} explore {} -- {} 7000; echo cmc-exited-$?; exec cat",
                  cmc_binary(), options, target));
  EXPECT_TRUE(terminal->shows("(cmc)")) << terminal->screen();
  return terminal;
}

// quit ends cmc with status 0, and with it the target.
void quit(const Terminal &terminal, const std::string &target) {
  terminal.keys("quit Enter");
  EXPECT_TRUE(terminal.shows("cmc-exited-0")) << terminal.screen();
  EXPECT_TRUE(running(target).empty());
}

TEST_F(Explore, AnInteractiveSessionInATerminal) {
  const std::string kv = copy_of_demo("kv");
  const auto session =
      explore_in_terminal("-m 'SET a\\\\n' --region cmc_state", kv);
  const Terminal &terminal = *session;
  ASSERT_EQ(running(kv).size(), 1U);
  terminal.keys("'send 1' Enter");
  ASSERT_TRUE(terminal.shows("changed: cmc_state+0 00 -> 01"))
      << terminal.screen();
  // Tab completes "sta" to state; Up twice recalls "send 1".
  terminal.keys("sta Tab Enter");
  ASSERT_TRUE(terminal.shows("after 1 step")) << terminal.screen();
  terminal.keys("Up Up Enter");
  ASSERT_TRUE(terminal.shows("(cmc) send 1", 2)) << terminal.screen();
  ASSERT_TRUE(terminal.shows("response: \"OK\\n\"", 2)) << terminal.screen();
  // Ctrl-C at the prompt leaves cmc and the target running.
  terminal.keys("C-c");
  terminal.keys("state Enter");
  ASSERT_TRUE(terminal.shows("after 2 steps")) << terminal.screen();
  EXPECT_EQ(running(kv).size(), 1U);
  terminal.keys("disc Tab Enter");
  ASSERT_TRUE(terminal.shows("disconnect needs named clients"))
      << terminal.screen();
  quit(terminal, kv);
}

// With clients, Tab completes `send bo` to `send bob:` (no blank: the text
// follows) and `disconnect al` to `disconnect alice`.
TEST_F(Explore, TabCompletesClientNamesInATerminal) {
  const std::string server = copy_of_demo("lock_server");
  const auto session = explore_in_terminal(
      R"(--client alice -m 'LOCK\\n' --client bob -m 'LOCK\\n' --region held)",
      server);
  const Terminal &terminal = *session;
  terminal.keys("'send bo' Tab 'LOCK\\n' Enter");
  ASSERT_TRUE(terminal.shows("step 1: bob: send \"LOCK\\n\""))
      << terminal.screen();
  ASSERT_TRUE(terminal.shows("changed: held+0 00 -> 02")) << terminal.screen();
  terminal.keys("'disconnect al' Tab Enter");
  ASSERT_TRUE(terminal.shows("step 2: alice: disconnect")) << terminal.screen();
  quit(terminal, server);
}

// Whether cmc's main thread waits in read(0, ...): at the prompt, its
// stdin empty; polled for 30 s at most.
bool waits_at_prompt(pid_t cmc) {
  const std::string syscall = "/proc/" + std::to_string(cmc) + "/syscall";
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    std::string call;
    std::getline(std::ifstream(syscall), call);
    if (call.starts_with("0 0x0 "))
      return true;
    std::this_thread::yield();
  }
  return false;
}

// The cmc-run-* directories in the /dev/shm of the sandboxes of cmc's
// (the children that are pid 1 of their PID namespace).
int run_directories(pid_t cmc) {
  int count = 0;
  for (const pid_t child : children_of(cmc)) {
    std::string line;
    std::string ids;
    std::ifstream status("/proc/" + std::to_string(child) + "/status");
    while (std::getline(status, line))
      if (line.starts_with("NSpid:"))
        ids = line;
    if (!ids.ends_with("\t1"))
      continue;
    std::error_code error;
    for (const auto &entry : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(child) + "/root/dev/shm", error))
      count += static_cast<int>(
          entry.path().filename().string().starts_with("cmc-run-"));
  }
  return count;
}

// SIGINT and SIGTERM at the prompt, stdin a pipe that stays open: the
// session ends as check does (one line, exit 3), the target and its
// sandbox with it. The runs before the last (reset) left no directory.
class ExploreSignal : public Explore,
                      public ::testing::WithParamInterface<int> {};

TEST_P(ExploreSignal, AtThePromptWithStdinOnAPipeEndsTheSession) {
  const std::string fifo = path("stdin");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Open for writing first (O_RDWR does not wait for a reader): cmc's
  // stdin is opened before posix_spawn returns.
  const int commands = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(commands, 0);
  const Started started = start_cmc({"explore", "-m", "SET a\\n", "--region",
                                     "cmc_state", "--", demo("kv"), "7000"},
                                    fifo);
  const std::string send = "send 1\nreset\nsend 1\n";
  ASSERT_EQ(write(commands, send.data(), send.size()),
            static_cast<ssize_t>(send.size()));
  ASSERT_TRUE(waits_at_prompt(started.pid));
  const auto before = children_of(started.pid);
  EXPECT_GE(before.size(), 2U) << "the target and its sandbox's init";
  EXPECT_EQ(run_directories(started.pid), 1);
  kill(started.pid, GetParam());
  const Outcome run = finish(started);
  close(commands);
  EXPECT_EQ(run.status, 3) << run.out << run.err;
  EXPECT_EQ(run.err, "cmc: interrupted\n") << run.out;
  EXPECT_TRUE(has(run.out, "cmc_state+0 00 -> 01")) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Signals, ExploreSignal,
                         ::testing::Values(SIGINT, SIGTERM));

} // namespace
} // namespace cmc::testing
