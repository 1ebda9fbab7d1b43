#include "app/plugins/property_plugin.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bytes.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

std::string fixture(const std::string &name) {
  return std::string(CMC_FIXTURE_DIR) + "/" + name;
}

// Two clients, A and B, each with a message, and a disconnect step each.
std::shared_ptr<tracer::TargetSpec> lock_spec() {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->messages = {"LOCK\n", "UNLOCK\n"};
  spec->clients = {"A", "B"};
  spec->client_of = {0, 1};
  spec->disconnect = true;
  return spec;
}

using testing::bytes;

TEST(PluginProperty, SeesEveryStepWithItsClientResponsesAndRegions) {
  const PluginProperty dump(fixture("path_dump.so"), lock_spec(),
                            {{"held", 0, 2}}, CMC_EXECUTABLE);
  EXPECT_TRUE(dump.needs_path());
  // A sends LOCK (and gets OK), then B disconnects.
  const std::vector<executor::PathStep> path{0, 3};
  const std::vector<std::vector<std::byte>> states{bytes({0, 0}), bytes({2, 0}),
                                                   bytes({2, 0})};
  const std::vector<std::vector<std::string>> received{{"OK\n", ""}, {"", ""}};
  EXPECT_EQ(dump.check_path({path, states, received}),
            "dump: clients 'A' 'B'; region held at 0+2; "
            "send by 0 'LOCK\n' got 'OK\n' of 'OK\n' '' 0000->0200; "
            "disconnect by 1 '' got '' of '' '' 0200->0200");
}

TEST(PluginProperty, OneClientWithoutNamesIsCalledEmpty) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->messages = {"SET a\n"};
  spec->tick = std::chrono::seconds(1);
  const PluginProperty dump(fixture("path_dump.so"), spec, {}, CMC_EXECUTABLE);
  // The message, then a tick (action 1).
  const std::vector<executor::PathStep> path{0, 1};
  const std::vector<std::vector<std::byte>> states(3);
  const std::vector<std::vector<std::string>> received{{"OK\n"}, {""}};
  EXPECT_EQ(dump.check_path({path, states, received}),
            "dump: clients ''; send by 0 'SET a\n' got 'OK\n' of 'OK\n' ->; "
            "tick by 0 '' got '' of '' ->");
}

// The UserError a plugin at path gives, with its exit code.
std::string load_error(const std::string &path) {
  try {
    const PluginProperty property(path, lock_spec(), {}, CMC_EXECUTABLE);
  } catch (const UserError &error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    return error.what();
  }
  return "loaded";
}

TEST(PluginProperty, RefusesWhatIsNoPluginOfThisAbi) {
  EXPECT_EQ(load_error("/nonexistent/plugin.so"),
            "--property /nonexistent/plugin.so: no such file");
  const std::string text =
      (std::filesystem::temp_directory_path() / "cmc_not_elf.so").string();
  std::ofstream(text) << "not an ELF file\n";
  EXPECT_NE(load_error(text).find(text + ": cannot load it: "),
            std::string::npos);
  std::filesystem::remove(text);
  EXPECT_NE(load_error("/lib/x86_64-linux-gnu/libm.so.6")
                .find("it defines no cmc_property"),
            std::string::npos);
  EXPECT_NE(load_error(fixture("wrong_abi.so"))
                .find("built for property ABI 3, but this cmc has ABI 2"),
            std::string::npos);
}

} // namespace
} // namespace cmc::app
