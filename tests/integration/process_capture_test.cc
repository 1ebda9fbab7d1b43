// The whole-process capture (tracer/capture/process_capture.h) of a real target
// under the tracer (targets/capture_target.c), and the fingerprints the
// ProcessExecutor makes of it.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string_view>

#include "decoder/elf_file.h"
#include "tests/integration/run_cmc.h"
#include "tracer/backend/process_executor.h"
#include "tracer/capture/process_capture.h"
#include "tracer/control/target_run.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/sandbox/sandbox.h"

namespace cmc::testing {
namespace {

using decoder::DescriptorImage;
using executor::StateKind;

constexpr std::string_view kValue = "hello-capture";

std::shared_ptr<tracer::TargetSpec> spec_of(StateKind state) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->launch.program = target("capture_target");
  spec->launch.argv = {spec->launch.program, "7000"};
  auto elf = decoder::ElfFile::open(spec->launch.program);
  CMC_CHECK(elf.ok(), "the capture target is built");
  spec->load_base = elf->load_base();
  spec->entry = elf->entry();
  spec->messages = {"SET " + std::string(kValue) + "\n", "SET other\n"};
  spec->state = state;
  return spec;
}

class ProcessCapture : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived the test";
  }

  // A run of the target after SET hello-capture.
  Result<tracer::TargetRun> started() {
    auto netns = tracer::NetworkNamespace::create();
    if (!netns)
      return netns.error();
    netns_.emplace(std::move(*netns));
    tracer::LaunchSpec launch = spec_->launch;
    launch.netns = netns_->fd();
    bool located = false;
    auto run = tracer::TargetRun::start(*spec_, launch, located);
    if (!run)
      return run.error();
    auto fault = run->step(0);
    if (!fault)
      return fault.error();
    if (*fault)
      return Error{(*fault)->describe()};
    return run;
  }

  std::shared_ptr<tracer::TargetSpec> spec_ = spec_of(StateKind::kProcess);
  std::optional<tracer::NetworkNamespace> netns_;
  tracer::ProcessCapture capture_;
};

const decoder::MemorySegment *segment(const decoder::ProcessImage &image,
                                      std::string_view name) {
  const auto found =
      std::ranges::find(image.memory, name, &decoder::MemorySegment::name);
  return found == image.memory.end() ? nullptr : &*found;
}

TEST_F(ProcessCapture, ReadsEveryThreadSectionStackAndDescriptor) {
  auto run = started();
  ASSERT_TRUE(run.ok()) << run.error().message;
  auto image = run->read_process(capture_);
  ASSERT_TRUE(image.ok()) << image.error().message;
  // The main thread (whose id, in the sandbox's PID namespace, is the
  // target's pid there) and the parked helper.
  ASSERT_EQ(image->threads.size(), 2U);
  EXPECT_EQ(image->threads[0].id, tracer::Sandbox::kTargetPid);
  for (const char *name :
       {".data of capture_target", ".bss of capture_target", "[heap]",
        ".bss of libc.so.6", "stack of thread 1", "stack of thread 2"})
    EXPECT_NE(segment(*image, name), nullptr) << name;
  EXPECT_TRUE(std::ranges::is_sorted(image->memory, {},
                                     &decoder::MemorySegment::address));
  // The cell SET filled is on the heap.
  const auto &heap = segment(*image, "[heap]")->bytes;
  const auto *value = reinterpret_cast<const std::byte *>(kValue.data());
  EXPECT_NE(std::search(heap.begin(), heap.end(), value, value + kValue.size()),
            heap.end());
  // A thread's stack starts at its stack pointer, less the part of the red
  // zone the code it waits in may read: the helper parks in a libc
  // wrapper that reads none of it.
  EXPECT_EQ(segment(*image, "stack of thread 2")->address,
            image->threads[1].registers.rsp);
  EXPECT_GE(image->dead_red_zone_bytes, 128U);
  EXPECT_GT(image->dead_register_bytes, 0U);

  std::map<std::string, int> kinds;
  for (const DescriptorImage &descriptor : image->descriptors)
    ++kinds[descriptor.kind];
  EXPECT_EQ(kinds["socket"], 2);
  EXPECT_EQ(kinds["eventpoll"], 1);
  EXPECT_EQ(kinds["eventfd"], 1);
  EXPECT_GE(kinds["pipe"], 2);
  std::vector<int> clients;
  for (const DescriptorImage &descriptor : image->descriptors) {
    if (descriptor.kind == "socket")
      clients.push_back(descriptor.client);
    // Two watches (the listening socket, the client's), 3 words each.
    if (descriptor.kind == "eventpoll") {
      EXPECT_EQ(descriptor.watches.size(), 6U);
    }
  }
  std::ranges::sort(clients);
  EXPECT_EQ(clients, (std::vector<int>{DescriptorImage::kListening, 0}));
}

TEST_F(ProcessCapture, PagesNeverBackedAreNeitherReadNorFaultedIn) {
  auto run = started();
  ASSERT_TRUE(run.ok()) << run.error().message;
  auto first = run->read_process(capture_);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::size_t total = std::accumulate(
      first->memory.begin(), first->memory.end(), std::size_t{0},
      [](std::size_t sum, const decoder::MemorySegment &segment) {
        return sum + segment.bytes.size();
      });
  // At least the MiB the target mapped and never touched is not read.
  EXPECT_GE(total - first->bytes_read, std::size_t{1} << 20);
  // Reading did not back them: a second capture reads as much.
  auto second = run->read_process(capture_);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->bytes_read, first->bytes_read);
}

TEST_F(ProcessCapture, TheSamePathGivesTheSameFingerprint) {
  tracer::ProcessExecutor executor(spec_);
  auto once = executor.run(std::vector<executor::PathStep>{0});
  auto again = executor.run(std::vector<executor::PathStep>{0});
  ASSERT_TRUE(once.ok() && again.ok());
  EXPECT_EQ(once->fingerprints, again->fingerprints);
  EXPECT_GT(once->bytes_read, 0U);
  EXPECT_GT(once->bytes_hashed, 0U);
  // glibc's heap walked: the cell is reached from a global.
  EXPECT_EQ(once->heap.allocator, "glibc");
  EXPECT_TRUE(once->heap.canonical);
  EXPECT_GE(once->heap.chunks, 1U);
}

TEST_F(ProcessCapture, StatesThatDifferOnlyOnTheHeapDiffer) {
  tracer::ProcessExecutor executor(spec_);
  auto hello = executor.run(std::vector<executor::PathStep>{0});
  auto other = executor.run(std::vector<executor::PathStep>{1});
  ASSERT_TRUE(hello.ok() && other.ok());
  EXPECT_NE(hello->fingerprints.back(), other->fingerprints.back());
}

TEST_F(ProcessCapture, OnlyTheLastStateAndItsParentAreRead) {
  tracer::ProcessExecutor executor(spec_);
  auto parent = executor.run(std::vector<executor::PathStep>{0, 1});
  auto path = executor.run(std::vector<executor::PathStep>{0, 1, 0});
  ASSERT_TRUE(parent.ok() && path.ok());
  ASSERT_EQ(path->fingerprints.size(), 4U);
  EXPECT_EQ(path->fingerprints[0], executor::kNotRead);
  EXPECT_EQ(path->fingerprints[1], executor::kNotRead);
  EXPECT_EQ(path->fingerprints[2], parent->fingerprints[2]);
  EXPECT_EQ(path->fingerprints[3], parent->fingerprints[1]);
  // Kept images: every state is read.
  executor.keep_images();
  auto kept = executor.run(std::vector<executor::PathStep>{0, 1, 0});
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->images.size(), 4U);
  for (const Fingerprint &fingerprint : kept->fingerprints)
    EXPECT_NE(fingerprint, executor::kNotRead);
  EXPECT_EQ(kept->fingerprints[1], parent->fingerprints[1]);
  EXPECT_EQ(kept->fingerprints[3], path->fingerprints[3]);
  EXPECT_FALSE(kept->images[3].bytes.empty());
}

TEST_F(ProcessCapture, AnAuditedRegionsRunReadsTheWholeLastState) {
  auto regions = spec_of(StateKind::kRegions);
  regions->audit = true;
  tracer::ProcessExecutor audited(regions);
  tracer::ProcessExecutor whole(spec_);
  const std::vector<executor::PathStep> path{0, 1};
  auto seen = audited.run(path);
  auto process = whole.run(path);
  ASSERT_TRUE(seen.ok() && process.ok());
  ASSERT_TRUE(seen->process_after.has_value());
  EXPECT_EQ(*seen->process_after, process->fingerprints.back());
  for (const Fingerprint &fingerprint : seen->fingerprints)
    EXPECT_NE(fingerprint, executor::kNotRead);
  regions->audit = false;
  tracer::ProcessExecutor unaudited(regions);
  auto plain = unaudited.run(path);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->process_after.has_value());
  EXPECT_EQ(plain->fingerprints, seen->fingerprints);
}

} // namespace
} // namespace cmc::testing
