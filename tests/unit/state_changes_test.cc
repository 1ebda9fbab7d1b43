#include "decoder/state_changes.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <gtest/gtest.h>

namespace cmc::decoder {
namespace {

// A process with a .bss of data objects (cells at 0x4010, name at 0x4020)
// and a descriptor.
ProcessImage image_with_globals() {
  ProcessImage image;
  MemorySegment bss;
  bss.name = ".bss of prog";
  bss.kind = MemoryKind::kData;
  bss.address = 0x555555558000;
  bss.link_address = 0x4000;
  bss.bytes.resize(64);
  bss.symbols = std::make_shared<const std::vector<Symbol>>(
      std::vector<Symbol>{{"cells", 0x4010, 2}, {"name", 0x4020, 16}});
  image.memory.push_back(std::move(bss));
  image.threads.emplace_back();
  DescriptorImage fd;
  fd.fd = 3;
  fd.kind = "socket";
  fd.client = DescriptorImage::kListening;
  image.descriptors.push_back(fd);
  return image;
}

CanonicalState kept(const ProcessImage &image) {
  CanonicalOptions options;
  options.heap = HeapModel::kRaw;
  options.keep_bytes = true;
  return canonicalize(image, options);
}

bool holds(const std::vector<std::string> &lines, const std::string &line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(StateChanges, GlobalsAreNamedByDataObjectAndTextShowsAsText) {
  const auto before = image_with_globals();
  auto after = image_with_globals();
  after.memory[0].bytes[0x11] = std::byte{1};
  std::memcpy(after.memory[0].bytes.data() + 0x20, "SET b", 5);
  auto both = after;
  std::memcpy(both.memory[0].bytes.data() + 0x20, "SET a", 5);
  const auto lines = describe_changes(kept(both), kept(after));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       ".bss of prog: name+0 \"SET a\" -> \"SET b\""}));
  const auto first = describe_changes(kept(before), kept(after));
  EXPECT_TRUE(holds(first, ".bss of prog: cells+1 00 -> 01")) << first[0];
  EXPECT_TRUE(holds(first, ".bss of prog: name+0 \"\" -> \"SET b\""));
  EXPECT_TRUE(describe_changes(kept(before), kept(before)).empty());
}

TEST(StateChanges, DescriptorsOpenCloseAndMove) {
  const auto before = image_with_globals();
  auto after = image_with_globals();
  after.descriptors[0].position = 12;
  DescriptorImage client;
  client.fd = 4;
  client.kind = "socket";
  client.client = 0;
  after.descriptors.push_back(client);
  const auto lines = describe_changes(kept(before), kept(after));
  EXPECT_TRUE(holds(lines, "fd 3 position 0 -> 12"));
  EXPECT_TRUE(holds(lines, "fd 4 opened: socket (client 1)"));
  EXPECT_TRUE(holds(describe_changes(kept(after), kept(before)),
                    "fd 4 closed: socket (client 1)"));
}

TEST(StateChanges, RegistersOnlyWhenNothingElseChangedAndLinesAreCapped) {
  const auto before = image_with_globals();
  auto after = image_with_globals();
  after.threads[0].registers.rax = 7;
  EXPECT_EQ(describe_changes(kept(before), kept(after)),
            (std::vector<std::string>{"registers of thread 1: rax"}));
  after.memory[0].bytes[0x10] = std::byte{1};
  EXPECT_EQ(describe_changes(kept(before), kept(after)),
            (std::vector<std::string>{".bss of prog: cells+0 00 -> 01"}));
  for (int fd = 10; fd < 26; ++fd) {
    DescriptorImage pipe;
    pipe.fd = fd;
    pipe.kind = "pipe";
    after.descriptors.push_back(pipe);
  }
  const auto capped = describe_changes(kept(before), kept(after), 4);
  ASSERT_EQ(capped.size(), 4U);
  EXPECT_EQ(capped.back(), "and 14 more changes");
}

TEST(StateChanges, AStatesViewShowsItsLiveGlobals) {
  auto image = image_with_globals();
  image.memory[0].bytes[0x10] = std::byte{1};
  const auto lines = describe_state(kept(image));
  EXPECT_EQ(lines, (std::vector<std::string>{"cells = 01 00",
                                             "fd 3: socket (listening)"}));
}

} // namespace
} // namespace cmc::decoder
