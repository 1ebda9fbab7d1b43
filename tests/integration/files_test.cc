// Files the target writes: a private working directory and --writable
// copies per run, the files in the state, writes elsewhere refused. The
// target journal keeps its only state in journal/log.

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

namespace fs = std::filesystem;

// A directory of the test's own, removed at the end, as TMPDIR: cmc writes
// nothing there (runs live in its sandboxes), nor in the host's /dev/shm.
class Files : public ::testing::Test {
protected:
  void SetUp() override {
    std::string path = fs::temp_directory_path() / "cmc-files-test-XXXXXX";
    ASSERT_NE(mkdtemp(path.data()), nullptr);
    dir_ = path;
    fs::create_directory(dir_ / "runs");
    setenv("TMPDIR", (dir_ / "runs").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TMPDIR");
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
    EXPECT_TRUE(fs::is_empty(dir_ / "runs")) << "a run left its files";
    EXPECT_TRUE(run_directories_on_host().empty())
        << "a run's directory is left";
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

std::vector<std::string> journal_check(std::vector<std::string> extra,
                                       const std::string &outside = "",
                                       const char *depth = "5") {
  std::vector<std::string> args{"check", "-q",          "--json",
                                "-",     "--max-depth", depth};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", target("journal"), "7000"});
  if (!outside.empty())
    args.push_back(outside);
  return args;
}

// Without --writable the directory journal/ does not exist in the run's
// working directory: the target cannot start.
TEST_F(Files, ARelativeDirectoryMissingStopsTheCheck) {
  const Outcome run = run_cmc(journal_check({"-m", "ADD\\n"}));
  EXPECT_EQ(run.status, 3);
  EXPECT_NE(run.err.find("journal/log: No such file"), std::string::npos)
      << run.err;
}

// The journal is the whole state (cmc_state stays zero): only a
// fingerprint with the file in it tells one ADD from two, and finds the
// abort at the fourth, the same at every -j.
TEST_F(Files, TheJournalIsInTheStateAtEveryJobCount) {
  for (const char *jobs : {"1", "2"}) {
    const Outcome run =
        run_cmc(journal_check({"-j", jobs, "--writable", "journal", "--region",
                               "cmc_state", "-m", "ADD\\n"}));
    ASSERT_EQ(run.status, 1) << run.err;
    const auto json = run.json();
    EXPECT_EQ(json["verdict"], "violated");
    EXPECT_EQ(json["counterexample"].size(), 4U) << json.dump();
    EXPECT_EQ(json["distinct_states"], 4) << json.dump();
    EXPECT_EQ(json["replay"]["writable"], nlohmann::json::array({"journal"}));
  }
}

// The replay of the counterexample gives each run the same --writable.
TEST_F(Files, ReplayKeepsTheWritableCopy) {
  const Outcome run =
      run_cmc({"replay", "--writable", "journal", "--region", "cmc_state",
               "--steps", "ADD\\n", "ADD\\n", "ADD\\n", "ADD\\n", "--",
               target("journal"), "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.out.find("SIGABRT"), std::string::npos) << run.out;
}

// A write to an absolute path outside stops the check with one line that
// names it, before the write happens.
TEST_F(Files, AWriteOutsideIsRefusedNamingThePath) {
  const fs::path outside = dir_ / "outside";
  fs::create_directory(outside);
  const Outcome run = run_cmc(journal_check(
      {"--writable", "journal", "-m", "OUT\\n"}, (outside / "out").string()));
  EXPECT_EQ(run.status, 3);
  EXPECT_NE(run.err.find("writes " + (outside / "out").string()),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("--writable " + outside.string()), std::string::npos)
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(fs::exists(outside / "out"));
}

// With --writable DIR (absolute) each run writes its own copy: the real
// directory is left as it was, and every run starts from it.
TEST_F(Files, AnAbsoluteWritableIsAPrivateCopyPerRun) {
  const fs::path outside = dir_ / "outside";
  fs::create_directory(outside);
  for (const char *jobs : {"1", "2"}) {
    const Outcome run = run_cmc(journal_check(
        {"-j", jobs, "--writable", "journal", "--writable", outside.string(),
         "--region", "cmc_state", "-m", "OUT\\n", "-m", "ADD\\n"},
        (outside / "out").string(), "3"));
    ASSERT_EQ(run.status, 0) << run.err;
    // (out written or not) x (0-3 journal lines) reachable in 3 steps.
    EXPECT_EQ(run.json()["distinct_states"], 7) << run.out;
    EXPECT_TRUE(fs::is_empty(outside));
  }
}

TEST_F(Files, AnAbsoluteWritableMustExist) {
  const Outcome run = run_cmc(
      journal_check({"--writable", (dir_ / "none").string(), "-m", "ADD\\n"}));
  EXPECT_EQ(run.status, 3);
  EXPECT_NE(run.err.find("must exist"), std::string::npos) << run.err;
}

} // namespace
} // namespace cmc::testing
