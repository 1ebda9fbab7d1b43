#include "tracer/syscalls/syscall_trace.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

#include "fake_process.h"

namespace cmc::tracer {
namespace {

// A per-connection thread of a server (tinyproxy's) writes its reply and
// ends in exit, while the main thread waits in accept: the trace shows the
// exit as a call that never returned, and the main thread's accept as the
// call the target waits in.
TEST(SyscallTrace, AThreadThatEndsInExitLeavesTheMainThreadsWait) {
  fake::ScriptedProcess process(100);
  process.add_thread(101);
  SyscallTrace trace(false);
  const VdsoLayout vdso;
  process.focus(100);
  ASSERT_TRUE(trace.entered(process, vdso, fake::entering(SYS_accept, 3)).ok());
  process.focus(101);
  Registers close = fake::entering(SYS_close, 4);
  ASSERT_TRUE(trace.entered(process, vdso, close).ok());
  close.set_result(0);
  ASSERT_TRUE(trace.returned(process, close).ok());
  ASSERT_TRUE(trace.entered(process, vdso, fake::entering(SYS_exit, 0)).ok());
  trace.ended_in_call(process);

  const std::vector<TracedCall> calls = trace.take();
  ASSERT_EQ(calls.size(), 2U);
  EXPECT_EQ(calls[0].parts.text(), "close(4) = 0");
  EXPECT_EQ(calls[1].parts.text(), "exit(0) = ?");
  const auto waiting = trace.pending(process);
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(waiting->number, SYS_accept);
}

// A thread's end with no call awaited (killed between calls) adds nothing.
TEST(SyscallTrace, AnEndOutsideACallAddsNothing) {
  fake::ScriptedProcess process(100);
  SyscallTrace trace(false);
  trace.ended_in_call(process);
  EXPECT_TRUE(trace.take().empty());
  EXPECT_FALSE(trace.pending(process).has_value());
}

} // namespace
} // namespace cmc::tracer
