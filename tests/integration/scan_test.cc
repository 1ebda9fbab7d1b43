// cmc scan against objdump on the machine's own libc, and the static rule:
// in a static executable, the functions of the system's libc.a are libc's.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

TEST(Scan, FindsEverySyscallSiteObjdumpFindsInLibc) {
  const Outcome run = run_cmc({"scan", "--json", "-", demo("kv")});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  ASSERT_TRUE(json.is_object() && json["modules"].is_array()) << run.out;
  EXPECT_EQ(json["run"], nullptr) << "no --run";
  bool saw_libc = false;
  for (const auto &module : json["modules"]) {
    EXPECT_EQ(module["observed_sites"], nullptr) << "no --run";
    const std::string path = module["module"];
    if (path == demo("kv")) {
      EXPECT_EQ(module["count"], 0) << "kv makes no syscall of its own";
      continue;
    }
    if (path.find("libc.so") == std::string::npos)
      continue;
    saw_libc = true;
    EXPECT_EQ(module["count"], objdump_count(path, "syscall"));
    EXPECT_EQ(module["attribution"], "file name");
    std::size_t numbered = 0;
    for (const auto &site : module["sites"]) {
      numbered += site["number"].is_number() ? 1 : 0;
      EXPECT_EQ(site["origin"], "libc");
    }
    EXPECT_GT(numbered, module["sites"].size() / 2);
  }
  EXPECT_TRUE(saw_libc);
}

// The instructions that only CPUID faulting hides, as objdump finds them:
// ld.so's cpuid (its CPU feature set-up) in text and JSON alike.
TEST(Scan, ListsTheCpuidSitesObjdumpFindsInTheLoader) {
  const Outcome run = run_cmc({"scan", "--json", "-", demo("kv")});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  bool saw_loader = false;
  for (const auto &module : json["modules"]) {
    const std::string path = module["module"];
    if (path.find("ld-linux") == std::string::npos)
      continue;
    saw_loader = true;
    const int cpuid = objdump_count(path, "cpuid");
    ASSERT_GT(cpuid, 0) << path;
    int listed = 0;
    for (const auto &site : module["cpu_sites"])
      listed += site["instruction"] == "cpuid" ? 1 : 0;
    EXPECT_EQ(listed, cpuid) << module["cpu_sites"];
    const Outcome text = run_cmc({"scan", demo("kv")});
    EXPECT_TRUE(has(text.out, fmt::format("; {} cpuid", cpuid))) << text.out;
  }
  EXPECT_TRUE(saw_loader);
}

// The one module of cmc scan --json of a static executable.
nlohmann::json static_module(const std::string &path) {
  const Outcome run = run_cmc({"scan", "--json", "-", path});
  EXPECT_EQ(run.status, 0) << run.err;
  const auto modules = run.json()["modules"];
  EXPECT_TRUE(modules.is_array() && modules.size() == 1) << run.out;
  return modules.is_array() && !modules.empty() ? modules[0] : nlohmann::json();
}

// How many sites of module have each origin.
std::map<std::string, int> origins(const nlohmann::json &module) {
  std::map<std::string, int> counts;
  for (const auto &site : module["sites"])
    ++counts[site["origin"]];
  return counts;
}

TEST(Scan, StaticLibcSitesAreLibcsAndTheAsmOnesInline) {
  const auto module = static_module(demo("asm_kv"));
  EXPECT_EQ(module["attribution"], "static libc");
  const std::string libc_a = module["static_libc"];
  EXPECT_TRUE(libc_a.ends_with("/libc.a")) << libc_a;
  EXPECT_EQ(module["count"], objdump_count(demo("asm_kv"), "syscall"));
  std::set<std::pair<std::string, std::string>> inline_sites;
  bool saw_libc_read = false;
  for (const auto &site : module["sites"]) {
    const std::string function = site["function"];
    if (site["origin"] == "inline") {
      EXPECT_EQ(site["inline"], true);
      inline_sites.emplace(function, site["name"]);
    }
    if (site["number"] == 0 &&
        (function == "__libc_read" || function == "read")) {
      saw_libc_read = true;
      EXPECT_EQ(site["origin"], "libc");
      EXPECT_EQ(site["inline"], false);
    }
  }
  EXPECT_EQ(inline_sites, (std::set<std::pair<std::string, std::string>>{
                              {"asm_read", "read"}, {"asm_write", "write"}}));
  EXPECT_TRUE(saw_libc_read);
  EXPECT_EQ(origins(module)["unknown"], 0);
}

TEST(Scan, KvStaticPieHasNoInlineSite) {
  const auto module = static_module(demo("kv_static_pie"));
  EXPECT_EQ(module["attribution"], "static libc");
  EXPECT_GT(module["count"], 100);
  EXPECT_EQ(origins(module),
            (std::map<std::string, int>{{"libc", module["count"]}}));
}

TEST(Scan, ListsOnlyInlineSitesUnlessAll) {
  const Outcome some = run_cmc({"scan", demo("asm_kv")});
  ASSERT_EQ(some.status, 0) << some.err;
  EXPECT_NE(some.out.find(" asm_read syscall 0 (read) inline\n"),
            std::string::npos)
      << some.out;
  EXPECT_NE(some.out.find(" asm_write syscall 1 (write) inline\n"),
            std::string::npos);
  EXPECT_EQ(some.out.find(" libc\n"), std::string::npos) << some.out;
  EXPECT_NE(some.out.find(" libc, 2 inline; static executable: libc's "
                          "functions from "),
            std::string::npos)
      << some.out;
  const Outcome all = run_cmc({"scan", "--all", demo("asm_kv")});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_NE(all.out.find(" __libc_read syscall 0 (read) libc\n"),
            std::string::npos)
      << all.out;
}

TEST(Scan, StrippedStaticExecutableSitesAreUnknown) {
  const std::string stripped = ::testing::TempDir() + "/asm_kv_stripped";
  const std::string strip =
      "strip --strip-all -o " + stripped + " " + demo("asm_kv");
  ASSERT_EQ(std::system(strip.c_str()), 0) << strip;
  const auto module = static_module(stripped);
  EXPECT_EQ(module["attribution"], "no symbols");
  EXPECT_EQ(module["static_libc"], nullptr);
  EXPECT_EQ(module["count"], static_module(demo("asm_kv"))["count"]);
  EXPECT_EQ(origins(module),
            (std::map<std::string, int>{{"unknown", module["count"]}}));
  for (const auto &site : module["sites"])
    EXPECT_EQ(site["inline"], nullptr);
  const Outcome text = run_cmc({"scan", stripped});
  EXPECT_NE(text.out.find("no function symbols: libc's sites cannot be told "
                          "from inline ones"),
            std::string::npos)
      << text.out;
}

// In a mount namespace of its own, the libc.a that cmc scan uses is hidden
// by an overlay with a whiteout for it.
TEST(Scan, WithoutLibcAStaticSitesAreInlineAndSaySo) {
  const std::string libc_a = static_module(demo("asm_kv"))["static_libc"];
  const std::string dir = libc_a.substr(0, libc_a.rfind('/'));
  const std::string work = ::testing::TempDir() + "/hide_libc_a";
  const std::string out = work + "/scan.json";
  const std::string command = fmt::format(
      "rm -rf {0} && mkdir -p {0}/upper {0}/work && "
      "mknod {0}/upper/libc.a c 0 0 && unshare -m sh -c 'mount --make-rprivate "
      "/ && mount -t overlay overlay -o lowerdir={1},upperdir={0}/upper,"
      "workdir={0}/work {1} || exit 99; exec {2} scan --json - {3} > {4}'",
      work, dir, cmc_binary(), demo("asm_kv"), out);
  const int status = std::system(command.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 99)
    GTEST_SKIP() << "no overlay mount: " << command;
  ASSERT_EQ(status, 0) << command;
  std::ifstream file(out);
  const auto json = nlohmann::json::parse(file, nullptr, false);
  std::filesystem::remove_all(work);
  ASSERT_TRUE(json.is_object() && json["modules"].size() == 1) << json;
  const auto &module = json["modules"][0];
  EXPECT_EQ(module["attribution"], "no static libc");
  EXPECT_EQ(module["static_libc"], nullptr);
  const std::string note = module["note"];
  EXPECT_TRUE(note.starts_with("no libc.a found")) << note;
  EXPECT_EQ(origins(module),
            (std::map<std::string, int>{{"inline", module["count"]}}));
}

TEST(Scan, RejectsANonElfFile) {
  const Outcome run = run_cmc({"scan", "/etc/passwd"});
  EXPECT_EQ(run.status, 3);
  EXPECT_NE(run.err.find("is not an ELF file"), std::string::npos) << run.err;
}

} // namespace
} // namespace cmc::testing
