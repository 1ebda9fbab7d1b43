// System calls shown as strace shows them, from registers and memory, with
// the argument shapes of the table of calls.

#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <map>

#include "tracer/syscalls/syscall_table.h"

namespace cmc::tracer {
namespace {

// A target memory of a few strings at fixed addresses.
std::string read_fake(std::uint64_t address, std::size_t length) {
  static const std::map<std::uint64_t, std::string> memory{
      {0x1000, std::string("SET a\nmore")},
      {0x2000, std::string("/etc/hosts\0junk", 15)},
      {0x3000, std::string(100, 'x')},
      // struct sockaddr_in of 127.0.0.1:7000
      {0x4000, std::string("\x02\x00\x1b\x58\x7f\x00\x00\x01"
                           "\0\0\0\0\0\0\0\0",
                           16)},
      // struct epoll_event {EPOLLIN|EPOLLET, 5}, packed
      {0x5000, std::string("\x01\x00\x00\x80\x05\0\0\0\0\0\0\0", 12)},
      {0x6000, std::string("/tmp/new\0", 9)},
      // struct timespec {1, 0}
      {0x7000, std::string("\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16)},
      // struct pollfd {3, POLLIN, 0}, {4, POLLIN|POLLOUT, 0}
      {0x8000, std::string("\x03\0\0\0\x01\0\0\0\x04\0\0\0\x05\0\0\0", 16)},
      // struct itimerspec {{0, 0}, {1, 500000000}}
      {0xa000,
       std::string(16, '\0') +
           std::string("\x01\0\0\0\0\0\0\0\x00\x65\xcd\x1d\0\0\0\0", 16)}};
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
            "openat(AT_FDCWD, \"/etc/hosts\", O_RDONLY|O_CLOEXEC) = -1 ENOENT "
            "(No such file or directory)");
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

TEST(SyscallFormat, TheStringLimitIsAnOption) {
  EXPECT_EQ(
      format_syscall(1, {4, 0x1000, 6}, 6, read_fake, {.string_limit = 4}),
      "write(4, \"SET \"..., 6) = 6");
}

TEST(SyscallFormat, FlagsAndConstantsAreNamed) {
  EXPECT_EQ(
      format_syscall(9, {0, 8192, 3, 0x22, static_cast<std::uint64_t>(-1), 0},
                     0x7ffff7fc0000, read_fake),
      "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, "
      "-1, 0) = 0x7ffff7fc0000");
  EXPECT_EQ(format_syscall(41, {2, 0x801, 0}, 3, read_fake),
            "socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_IP) = 3");
  EXPECT_EQ(format_syscall(288, {3, 0, 0, 0x80800}, 5, read_fake),
            "accept4(3, NULL, NULL, SOCK_NONBLOCK|SOCK_CLOEXEC) = 5");
  EXPECT_EQ(format_syscall(72, {5, 3}, 2, read_fake), "fcntl(5, F_GETFL) = 2");
  EXPECT_EQ(format_syscall(72, {5, 4, 0x802}, 0, read_fake),
            "fcntl(5, F_SETFL, O_RDWR|O_NONBLOCK) = 0");
  EXPECT_EQ(format_syscall(62, {1234, 15}, 0, read_fake),
            "kill(1234, SIGTERM) = 0");
  EXPECT_EQ(format_syscall(45, {5, 0x1000, 64, 0x40, 0, 0}, -11, read_fake),
            "recvfrom(5, 0x1000, 64, MSG_DONTWAIT, NULL, NULL) = -1 EAGAIN "
            "(Resource temporarily unavailable)");
}

TEST(SyscallFormat, UnknownBitsAreAHexRemainder) {
  EXPECT_EQ(format_syscall(10, {0x1000, 4096, 0x101}, 0, read_fake),
            "mprotect(0x1000, 4096, PROT_READ|0x100) = 0");
  EXPECT_EQ(format_syscall(10, {0x1000, 4096, 0}, 0, read_fake),
            "mprotect(0x1000, 4096, PROT_NONE) = 0");
  EXPECT_EQ(format_syscall(233, {4, 7, 5, 0}, -22, read_fake),
            "epoll_ctl(4, 7, 5, NULL) = -1 EINVAL (Invalid argument)");
}

TEST(SyscallFormat, StructsAreShownAsStraceDoes) {
  EXPECT_EQ(format_syscall(49, {3, 0x4000, 16}, 0, read_fake),
            "bind(3, {sa_family=AF_INET, sin_port=htons(7000), "
            "sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0");
  EXPECT_EQ(format_syscall(233, {4, 1, 5, 0x5000}, 0, read_fake),
            "epoll_ctl(4, EPOLL_CTL_ADD, 5, {events=EPOLLIN|EPOLLET, "
            "data={u32=5, u64=5}}) = 0");
}

TEST(SyscallFormat, TimesAreShownAsStraceDoes) {
  EXPECT_EQ(format_syscall(SYS_nanosleep, {0x7000, 0}, 0, read_fake),
            "nanosleep({tv_sec=1, tv_nsec=0}, NULL) = 0");
  EXPECT_EQ(
      format_syscall(SYS_clock_nanosleep, {1, 0, 0x7000, 0}, 0, read_fake),
      "clock_nanosleep(CLOCK_MONOTONIC, 0, {tv_sec=1, tv_nsec=0}, "
      "NULL) = 0");
  EXPECT_EQ(
      format_syscall(SYS_timerfd_settime, {5, 0, 0xa000, 0}, 0, read_fake),
      "timerfd_settime(5, 0, {it_interval={tv_sec=0, tv_nsec=0}, "
      "it_value={tv_sec=1, tv_nsec=500000000}}, NULL) = 0");
}

TEST(SyscallFormat, ATimeTheCallFillsShowsOnceItReturned) {
  EXPECT_EQ(format_syscall(SYS_clock_gettime, {1, 0x7000}, 0, read_fake),
            "clock_gettime(CLOCK_MONOTONIC, {tv_sec=1, tv_nsec=0}) = 0");
  EXPECT_EQ(
      format_syscall(SYS_clock_gettime, {1, 0x7000}, std::nullopt, read_fake),
      "clock_gettime(CLOCK_MONOTONIC, 0x7000) = ?");
  EXPECT_EQ(format_syscall(SYS_clock_gettime, {1, 0x7000}, -14, read_fake),
            "clock_gettime(CLOCK_MONOTONIC, 0x7000) = -1 EFAULT (Bad "
            "address)");
}

TEST(SyscallFormat, PollShowsItsDescriptorsUpToTheLimit) {
  const auto forever = static_cast<std::uint64_t>(-1);
  EXPECT_EQ(format_syscall(SYS_poll, {0x8000, 2, forever}, 1, read_fake),
            "poll([{fd=3, events=POLLIN}, {fd=4, events=POLLIN|POLLOUT}], "
            "2, -1) = 1");
  EXPECT_EQ(format_syscall(SYS_poll, {0x8000, 2, forever}, 1, read_fake,
                           {.string_limit = 1}),
            "poll([{fd=3, events=POLLIN}, ...], 2, -1) = 1");
  // ppoll's timeout the kernel overwrites with the time left: shown as
  // the address, not as a timeout the call never had.
  EXPECT_EQ(format_syscall(SYS_ppoll, {0x8000, 1, 0x7000, 0}, 1, read_fake),
            "ppoll([{fd=3, events=POLLIN}], 1, 0x7000, NULL) = 1");
  EXPECT_EQ(format_syscall(SYS_poll, {0x9000, 1, 0}, 0, read_fake),
            "poll(0x9000, 1, 0) = 0");
}

TEST(SyscallFormat, AModeShowsOnlyWhenTheCallCreates) {
  EXPECT_EQ(format_syscall(
                257, {static_cast<std::uint64_t>(-100), 0x6000, 0x241, 0644}, 3,
                read_fake),
            "openat(AT_FDCWD, \"/tmp/new\", O_WRONLY|O_CREAT|O_TRUNC, 0644) "
            "= 3");
}

TEST(TraceFilter, NamesAndClassesSelectCalls) {
  auto filter = TraceFilter::parse("accept4,read");
  ASSERT_TRUE(filter.ok());
  EXPECT_TRUE(filter->shows(SYS_read));
  EXPECT_TRUE(filter->shows(SYS_accept4));
  EXPECT_FALSE(filter->shows(SYS_write));
  auto network = TraceFilter::parse("%network");
  ASSERT_TRUE(network.ok());
  EXPECT_TRUE(network->shows(SYS_socket));
  EXPECT_FALSE(network->shows(SYS_mmap));
  auto memory = TraceFilter::parse("!%memory");
  ASSERT_TRUE(memory.ok());
  EXPECT_FALSE(memory->shows(SYS_mmap));
  EXPECT_TRUE(memory->shows(SYS_read));
  auto file = TraceFilter::parse("%file");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(file->shows(SYS_openat));
  EXPECT_TRUE(TraceFilter().shows(SYS_read));
}

TEST(TraceFilter, AnUnknownNameIsAnError) {
  const auto filter = TraceFilter::parse("read,frobnicate");
  ASSERT_FALSE(filter.ok());
  EXPECT_NE(filter.error().message.find("'frobnicate'"), std::string::npos);
  EXPECT_FALSE(TraceFilter::parse("%nosuch").ok());
}

} // namespace
} // namespace cmc::tracer
