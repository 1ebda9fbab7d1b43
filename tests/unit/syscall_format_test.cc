// System calls shown as strace shows them, from registers and memory, with
// the argument shapes of the table of calls.

#include <gtest/gtest.h>

#include <map>

#include "tracer/syscall_table.h"

namespace cmc::tracer {
namespace {

// A target memory of a few strings at fixed addresses.
std::string read_fake(std::uint64_t address, std::size_t length) {
  static const std::map<std::uint64_t, std::string> memory{
      {0x1000, std::string("SET a\nmore")},
      {0x2000, std::string("/etc/hosts\0junk", 15)},
      {0x3000, std::string(100, 'x')}};
  const auto found = memory.find(address);
  if (found == memory.end())
    return "";
  return found->second.substr(0, length);
}

TEST(SyscallFormat, ShowsTheBytesAReadReturned) {
  EXPECT_EQ(format_syscall(0, {4, 0x1000, 64}, 6, read_fake),
            "read(4, \"SET a\\n\", 64) = 6");
}

TEST(SyscallFormat, ShowsTheBytesAWriteSendsUpTo32) {
  EXPECT_EQ(format_syscall(1, {4, 0x3000, 100}, 100, read_fake),
            "write(4, \"" + std::string(32, 'x') + "\"..., 100) = 100");
}

TEST(SyscallFormat, ShowsPathsFlagsAndErrors) {
  EXPECT_EQ(format_syscall(
                257, {static_cast<std::uint64_t>(-100), 0x2000, 0x80000, 0}, -2,
                read_fake),
            "openat(-100, \"/etc/hosts\", 0x80000, 0x0) = -1 ENOENT");
}

TEST(SyscallFormat, ACallStillWaitingHasNoResult) {
  EXPECT_EQ(format_syscall(0, {4, 0x1000, 64}, std::nullopt, read_fake),
            "read(4, 0x1000, 64) = ?");
}

TEST(SyscallFormat, AnUnknownCallShowsItsRegisters) {
  EXPECT_EQ(format_syscall(999, {1, 2, 3, 4, 5, 6}, 0, read_fake),
            "syscall_999(0x1, 0x2, 0x3, 0x4, 0x5, 0x6) = 0");
}

TEST(SyscallFormat, UnreadableMemoryShowsTheAddress) {
  EXPECT_EQ(format_syscall(1, {4, 0x9000, 3}, 3, read_fake),
            "write(4, 0x9000, 3) = 3");
}

} // namespace
} // namespace cmc::tracer
