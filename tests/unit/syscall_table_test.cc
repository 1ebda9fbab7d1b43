// The table of system calls: what holds of every row without a process.

#include <gtest/gtest.h>

#include <seccomp.h>
#include <sys/syscall.h>

#include <set>
#include <string>

#include "tracer/syscalls/input_wait.h"
#include "tracer/syscalls/syscall_table.h"

namespace cmc::tracer {
namespace {

TEST(SyscallTable, NamesAndNumbersAreUnique) {
  std::set<std::string_view> names;
  std::set<long> numbers;
  for (const Syscall &call : syscalls()) {
    EXPECT_TRUE(names.insert(call.name).second) << call.name;
    EXPECT_TRUE(numbers.insert(call.number).second) << call.name;
  }
}

// The filter rules take the rows' numbers: each must be the one libseccomp
// (and so the kernel) gives the row's name on x86-64.
TEST(SyscallTable, EveryRowsNumberIsItsNamesForLibseccomp) {
  for (const Syscall &call : syscalls())
    EXPECT_EQ(seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64,
                                                std::string(call.name).c_str()),
              call.number)
        << call.name;
}

TEST(SyscallTable, ShapesHaveAtMostSixKnownArguments) {
  for (const Syscall &call : syscalls()) {
    if (!call.shape)
      continue;
    EXPECT_TRUE(decoder::valid_shape(*call.shape)) << call.name;
    // A buffer the call reads has its length in the next argument.
    const auto arguments = decoder::shape_arguments(*call.shape);
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (arguments[i] == "i" || arguments[i] == "{sockaddr}" ||
          arguments[i] == "{pollfd}") {
        EXPECT_LT(i + 1, arguments.size()) << call.name;
      }
  }
}

TEST(SyscallTable, ArgumentIndicesAreArguments) {
  for (const Syscall &call : syscalls()) {
    EXPECT_LT(call.timeout.arg, 6) << call.name;
    EXPECT_LT(call.flags_arg, 6) << call.name;
    EXPECT_LT(call.trap_if.arg, 6) << call.name;
    if (call.trap_if.arg >= 0) {
      EXPECT_NE(call.trap_if.any_bit, 0U) << call.name;
      EXPECT_NE(call.handler, nullptr) << call.name;
    }
  }
}

// A wait for input asks its row what it waits for; a recv, its flags.
TEST(SyscallTable, EveryInputWaitKnowsWhatItWaitsFor) {
  for (const Syscall &call : syscalls()) {
    const bool waits =
        call.handler == wait_for_input || call.handler == on_read ||
        call.handler == on_readv || call.handler == on_recvfrom ||
        call.handler == on_recvmsg || call.handler == on_recvmmsg;
    EXPECT_EQ(waits, call.blocks != nullptr) << call.name;
    EXPECT_EQ(call.blocks == recv_blocks, call.flags_arg >= 0) << call.name;
    if (call.timeout.kind != Timeout::Kind::kNone) {
      EXPECT_TRUE(waits) << call.name;
    }
  }
}

// SECCOMP_RET_DATA names a row: the calls' rows by index, then the rows of
// any other call and of a foreign ABI, which have handlers but no number.
TEST(SyscallTable, SeccompDataNamesTheRows) {
  const auto calls = syscalls();
  for (std::size_t data = 0; data < calls.size(); ++data)
    EXPECT_EQ(syscall_at(data), &calls[data]);
  for (const std::size_t data : {calls.size(), calls.size() + 1}) {
    ASSERT_NE(syscall_at(data), nullptr);
    EXPECT_EQ(syscall_at(data)->number, -1);
    EXPECT_NE(syscall_at(data)->handler, nullptr);
  }
  EXPECT_EQ(syscall_at(calls.size() + 2), nullptr);
}

TEST(SyscallTable, ANumberFindsItsRow) {
  ASSERT_NE(syscall_of(SYS_accept4), nullptr);
  EXPECT_EQ(syscall_of(SYS_accept4)->name, "accept4");
  EXPECT_EQ(syscall_of(999), nullptr);
}

TEST(SyscallTable, TheFiltersBuild) {
  EXPECT_GT(seccomp_program().len, 0U);
  EXPECT_GT(observing_program(3).size(), seccomp_program().len);
}

} // namespace
} // namespace cmc::tracer
