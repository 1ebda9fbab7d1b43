// Backtraces of a target stopped at a system call: libunwind and libdwfl
// on the call_chain target, built the four ways cmc checks binaries.

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/integration/run_cmc.h"
#include "tracer/process/backtrace.h"
#include "tracer/process/tracee.h"
#include "tracer/syscalls/syscall_table.h"

namespace cmc::testing {
namespace {

using executor::Frame;
using tracer::Backtracer;

struct Variant {
  const char *name;
  bool shared_libc; // false: libc is linked into the binary
  bool lines;       // false: stripped, with no debug information left
};

void PrintTo(const Variant &variant, std::ostream *out) {
  *out << variant.name;
}

// Resumes the target until its next seccomp stop at listen; fails if it
// ends first. Other stops pass, with their signal if they have one.
Result<void> run_to_listen(tracer::Tracee &tracee) {
  for (int stops = 0; stops < 10000; ++stops) {
    int signal = 0;
    while (true) {
      auto status = tracee.resume_and_wait(signal);
      if (!status)
        return status.error();
      if (status->gone())
        return Error{"the target ended before listen"};
      if (status->seccomp_stop())
        break;
      signal = status->ptrace_event() == 0 ? status->stop_signal() : 0;
      if (signal == SIGTRAP)
        signal = 0;
    }
    auto regs = tracee.registers();
    if (!regs)
      return regs.error();
    if (regs->syscall_number() == SYS_listen)
      return {};
  }
  return Error{"too many stops before listen"};
}

// Where name first appears in frames, or frames.size().
std::size_t position(const std::vector<Frame> &frames,
                     const std::string &name) {
  const auto found =
      std::find_if(frames.begin(), frames.end(),
                   [&](const Frame &frame) { return frame.function == name; });
  return static_cast<std::size_t>(found - frames.begin());
}

std::string dump(const std::vector<Frame> &frames) {
  std::string text;
  for (const Frame &frame : frames)
    text += "  " + executor::describe(frame) + " [" + frame.module + "]\n";
  return text;
}

class Backtrace : public ::testing::TestWithParam<Variant> {
protected:
  void SetUp() override {
    tracer::LaunchSpec spec;
    spec.program = target(GetParam().name);
    spec.argv = {spec.program};
    auto spawned =
        tracer::Tracee::spawn(spec, tracer::seccomp_filter(spec.observe));
    ASSERT_TRUE(spawned.ok()) << spawned.error().message;
    tracee_ = std::move(*spawned);
    auto stopped = run_to_listen(*tracee_);
    ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  }
  void TearDown() override {
    tracee_.reset();
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived its test";
  }

  // Checks the innermost frame: listen itself, in libc.
  static void expect_in_listen(const Frame &frame) {
    if (GetParam().shared_libc)
      EXPECT_NE(frame.module.find("libc.so"), std::string::npos)
          << frame.module;
    else
      EXPECT_NE(frame.function.find("listen"), std::string::npos)
          << frame.function;
  }

  std::unique_ptr<tracer::Tracee> tracee_;
};

TEST_P(Backtrace, NamesTheCallChainFromTheSyscallToMain) {
  auto tracer = Backtracer::attach(tracee_->pid());
  ASSERT_TRUE(tracer.ok()) << tracer.error().message;
  auto frames = tracer->unwind();
  ASSERT_TRUE(frames.ok()) << frames.error().message;
  const std::string text = dump(*frames);
  ASSERT_FALSE(frames->empty());
  expect_in_listen(frames->front());
  const std::size_t inner = position(*frames, "inner");
  const std::size_t outer = position(*frames, "outer");
  const std::size_t main = position(*frames, "main");
  ASSERT_LT(main, frames->size()) << text;
  EXPECT_LE(inner, 1U) << text;
  EXPECT_EQ(outer, inner + 1) << text;
  EXPECT_EQ(main, outer + 1) << text;
  const Frame &in_inner = frames->at(inner);
  EXPECT_NE(in_inner.module.find(GetParam().name), std::string::npos);
  EXPECT_GT(in_inner.offset, 0U);
  if (GetParam().lines) {
    EXPECT_TRUE(in_inner.file.ends_with("call_chain.c")) << in_inner.file;
    EXPECT_EQ(in_inner.line, 6) << text;
    EXPECT_EQ(frames->at(outer).line, 8) << text;
    EXPECT_EQ(frames->at(main).line, 11) << text;
    EXPECT_NE(executor::describe(in_inner).find("inner+0x"), std::string::npos);
    EXPECT_TRUE(executor::describe(in_inner).ends_with("(call_chain.c:6)"))
        << executor::describe(in_inner);
  }
}

TEST_P(Backtrace, ServesEveryStopOfTheProcess) {
  auto tracer = Backtracer::attach(tracee_->pid());
  ASSERT_TRUE(tracer.ok()) << tracer.error().message;
  auto first = tracer->unwind();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(run_to_listen(*tracee_).ok());
  auto second = tracer->unwind();
  ASSERT_TRUE(second.ok()) << second.error().message;
  const std::string text = dump(*second);
  const std::size_t inner = position(*second, "inner");
  EXPECT_LE(inner, 1U) << text;
  EXPECT_EQ(position(*second, "main"), inner + 1) << text;
  EXPECT_EQ(position(*second, "outer"), second->size()) << text;
  if (GetParam().lines) {
    ASSERT_LT(inner + 1, second->size()) << text;
    EXPECT_EQ(second->at(inner + 1).line, 12) << text;
  }
}

TEST_P(Backtrace, StopsAtMaxFrames) {
  auto tracer = Backtracer::attach(tracee_->pid());
  ASSERT_TRUE(tracer.ok()) << tracer.error().message;
  auto frames = tracer->unwind(2);
  ASSERT_TRUE(frames.ok()) << frames.error().message;
  EXPECT_EQ(frames->size(), 2U);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, Backtrace,
    ::testing::Values(Variant{"call_chain", true, true},
                      Variant{"call_chain_nopie", true, true},
                      Variant{"call_chain_stripped", true, false},
                      Variant{"call_chain_static_pie", false, true}),
    [](const ::testing::TestParamInfo<Variant> &info) {
      return std::string(info.param.name);
    });

TEST(BacktraceAttach, FailsOnAProcessThatIsNotAStoppedTracee) {
  auto self = Backtracer::attach(getpid());
  ASSERT_FALSE(self.ok());
  EXPECT_NE(self.error().message.find("not a stopped tracee"),
            std::string::npos)
      << self.error().message;
  // A pid that no longer exists.
  const pid_t child = fork();
  if (child == 0)
    _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(Backtracer::attach(child).ok());
}

TEST(BacktraceDescribe, NamesWhatIsKnown) {
  EXPECT_EQ(executor::describe(Frame{.pc = 0x7f0000001234}),
            "?? 0x7f0000001234");
  EXPECT_EQ(executor::describe(
                Frame{.pc = 0x7f0000001234, .module = "/usr/lib/libc.so.6"}),
            "?? 0x7f0000001234 (libc.so.6)");
  EXPECT_EQ(executor::describe(Frame{.pc = 0x401000,
                                     .function = "main",
                                     .offset = 0x1c,
                                     .module = "/srv/kv",
                                     .file = "/src/kv.c",
                                     .line = 88}),
            "main+0x1c (kv.c:88)");
}

} // namespace
} // namespace cmc::testing
