// cmc scan against objdump on the machine's own libc.

#include <cstdio>

#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

// objdump's count of `syscall` instructions in path.
int objdump_syscalls(const std::string &path) {
  const std::string command =
      "objdump -d " + path + " | grep -cP '\\tsyscall\\s*$'";
  FILE *pipe = popen(command.c_str(), "r");
  int count = -1;
  if (pipe != nullptr && std::fscanf(pipe, "%d", &count) != 1)
    count = -1;
  if (pipe != nullptr)
    pclose(pipe);
  return count;
}

TEST(Scan, FindsEverySyscallSiteObjdumpFindsInLibc) {
  const Outcome run = run_cmc({"scan", "--json", "-", demo("kv")});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  ASSERT_TRUE(json.is_array()) << run.out;
  bool saw_libc = false;
  for (const auto &module : json) {
    const std::string path = module["module"];
    if (path == demo("kv")) {
      EXPECT_EQ(module["count"], 0) << "kv makes no syscall of its own";
      continue;
    }
    if (path.find("libc.so") == std::string::npos)
      continue;
    saw_libc = true;
    EXPECT_EQ(module["count"], objdump_syscalls(path));
    std::size_t numbered = 0;
    for (const auto &site : module["sites"])
      numbered += site["number"].is_number() ? 1 : 0;
    EXPECT_GT(numbered, module["sites"].size() / 2);
  }
  EXPECT_TRUE(saw_libc);
}

TEST(Scan, RejectsANonElfFile) {
  const Outcome run = run_cmc({"scan", "/etc/passwd"});
  EXPECT_EQ(run.status, 3);
  EXPECT_NE(run.err.find("is not an ELF file"), std::string::npos) << run.err;
}

} // namespace
} // namespace cmc::testing
