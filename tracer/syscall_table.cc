#include "tracer/syscall_table.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace cmc::tracer {
namespace {

constexpr std::array kTable{
    TrappedSyscall{"listen", Trap::kListen},
    TrappedSyscall{"accept", Trap::kFdInput},
    TrappedSyscall{"accept4", Trap::kFdInput},
    TrappedSyscall{"read", Trap::kFdInput, -1, Source::kDevRandom},
    TrappedSyscall{"readv", Trap::kFdInput},
    TrappedSyscall{"recvfrom", Trap::kRecv, 3},
    TrappedSyscall{"recvmsg", Trap::kRecv, 2},
    TrappedSyscall{"recvmmsg", Trap::kRecv, 3},
    TrappedSyscall{"poll", Trap::kPoll},
    TrappedSyscall{"ppoll", Trap::kPpoll},
    TrappedSyscall{"select", Trap::kSelect},
    TrappedSyscall{"pselect6", Trap::kPselect},
    TrappedSyscall{"epoll_wait", Trap::kEpollWait},
    TrappedSyscall{"epoll_pwait", Trap::kEpollWait},
    TrappedSyscall{"epoll_pwait2", Trap::kEpollPwait2},
    TrappedSyscall{"nanosleep", Trap::kSleep, -1, Source::kSleep},
    TrappedSyscall{"clock_nanosleep", Trap::kClockSleep, -1, Source::kSleep},
    TrappedSyscall{"futex", Trap::kFutex},
    TrappedSyscall{"timerfd_settime", Trap::kTimerfdSet, -1, Source::kTimerfd},
    TrappedSyscall{"timerfd_gettime", Trap::kTimerfdGet, -1, Source::kTimerfd},
    TrappedSyscall{"clock_gettime", Trap::kEmulate, -1, Source::kClockGettime},
    TrappedSyscall{"gettimeofday", Trap::kEmulate, -1, Source::kGettimeofday},
    TrappedSyscall{"time", Trap::kEmulate, -1, Source::kTime},
    TrappedSyscall{"clock_getres", Trap::kEmulate, -1, Source::kClockGetres},
    TrappedSyscall{"getcpu", Trap::kEmulate, -1, Source::kGetcpu},
    TrappedSyscall{"getrandom", Trap::kEmulate, -1, Source::kGetrandom},
    TrappedSyscall{"rseq", Trap::kRefuse, -1, Source::kRseq},
    TrappedSyscall{"io_uring_setup", Trap::kRefuse, -1, Source::kIoUring},
    TrappedSyscall{"alarm", Trap::kTimer},
    TrappedSyscall{"setitimer", Trap::kTimer},
    TrappedSyscall{"timer_settime", Trap::kTimer},
    TrappedSyscall{"times", Trap::kPassThrough, -1, Source::kTimes},
    TrappedSyscall{"getrusage", Trap::kPassThrough, -1, Source::kTimes},
    TrappedSyscall{"sysinfo", Trap::kPassThrough, -1, Source::kTimes},
    TrappedSyscall{"open", Trap::kWritePath, 1, {}, {{{-1, 0}}}},
    TrappedSyscall{"openat", Trap::kWritePath, 2, {}, {{{0, 1}}}},
    TrappedSyscall{"openat2", Trap::kWritePath, -1, {}, {{{0, 1}}}},
    TrappedSyscall{"creat", Trap::kWritePath, -1, {}, {{{-1, 0}}}},
    TrappedSyscall{"truncate", Trap::kWritePath, -1, {}, {{{-1, 0}}}},
    TrappedSyscall{"mkdir", Trap::kWritePath, -1, {}, {{{-1, 0}}}},
    TrappedSyscall{"mkdirat", Trap::kWritePath, -1, {}, {{{0, 1}}}},
    TrappedSyscall{"mknod", Trap::kWritePath, -1, {}, {{{-1, 0}}}},
    TrappedSyscall{"mknodat", Trap::kWritePath, -1, {}, {{{0, 1}}}},
    TrappedSyscall{"rmdir", Trap::kWritePath, -1, {}, {{{-1, 0}}}},
    TrappedSyscall{"unlink", Trap::kWritePath, -1, {}, {{{-1, 0}}}},
    TrappedSyscall{"unlinkat", Trap::kWritePath, -1, {}, {{{0, 1}}}},
    TrappedSyscall{"rename", Trap::kWritePath, -1, {}, {{{-1, 0}, {-1, 1}}}},
    TrappedSyscall{"renameat", Trap::kWritePath, -1, {}, {{{0, 1}, {2, 3}}}},
    TrappedSyscall{"renameat2", Trap::kWritePath, -1, {}, {{{0, 1}, {2, 3}}}},
    TrappedSyscall{"link", Trap::kWritePath, -1, {}, {{{-1, 1}}}},
    TrappedSyscall{"linkat", Trap::kWritePath, -1, {}, {{{2, 3}}}},
    TrappedSyscall{"symlink", Trap::kWritePath, -1, {}, {{{-1, 1}}}},
    TrappedSyscall{"symlinkat", Trap::kWritePath, -1, {}, {{{1, 2}}}},
    TrappedSyscall{"(any other)", Trap::kObserve},
    TrappedSyscall{"(foreign ABI)", Trap::kForeignArch},
};
constexpr std::uint16_t kForeignRow = kTable.size() - 1;
constexpr std::uint16_t kObserveRow = kTable.size() - 2;

struct FilterContext {
  scmp_filter_ctx ctx;
  FilterContext(const FilterContext &) = delete;
  FilterContext &operator=(const FilterContext &) = delete;
  explicit FilterContext(std::uint32_t default_action)
      : ctx(seccomp_init(default_action)) {}
  ~FilterContext() { seccomp_release(ctx); }
};

void require(int rc, const char *what) {
  if (rc != 0)
    throw std::runtime_error(std::string("libseccomp: ") + what + ": " +
                             std::strerror(-rc));
}

// The rules of one row: an open stops only when its flags ask to write
// (one masked comparison per flag, as BPF has no "any bit of"), so reads
// run freely.
void add_rules(scmp_filter_ctx ctx, std::uint16_t row) {
  const TrappedSyscall &call = kTable[row];
  const int nr = seccomp_syscall_resolve_name(call.name);
  require(nr == __NR_SCMP_ERROR ? -EINVAL : 0, call.name);
  if (call.trap != Trap::kWritePath || call.flags_arg < 0) {
    require(seccomp_rule_add(ctx, SCMP_ACT_TRACE(row), nr, 0), call.name);
    return;
  }
  for (const scmp_datum_t flag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC}) {
    const scmp_arg_cmp asks{static_cast<unsigned>(call.flags_arg),
                            SCMP_CMP_MASKED_EQ, flag, flag};
    require(seccomp_rule_add_array(ctx, SCMP_ACT_TRACE(row), nr, 1, &asks),
            call.name);
  }
}

// The table's rules over default_action; with observe_fd >= 0, also the
// calls of the launch itself allowed (see observing_program).
std::vector<sock_filter> build_program(std::uint32_t default_action,
                                       int observe_fd) {
  const FilterContext filter(default_action);
  if (filter.ctx == nullptr)
    throw std::runtime_error("libseccomp: seccomp_init failed");
  require(seccomp_attr_set(filter.ctx, SCMP_FLTATR_ACT_BADARCH,
                           SCMP_ACT_TRACE(kForeignRow)),
          "bad-arch action");
  for (std::uint16_t row = 0; row < kObserveRow; ++row)
    add_rules(filter.ctx, row);
  if (observe_fd >= 0) {
    require(seccomp_rule_add(filter.ctx, SCMP_ACT_ALLOW, SCMP_SYS(execve), 0),
            "execve");
    require(seccomp_rule_add(filter.ctx, SCMP_ACT_ALLOW, SCMP_SYS(execveat), 0),
            "execveat");
    require(seccomp_rule_add(
                filter.ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(observe_fd))),
            "write");
  }
  // libseccomp 2.5 exports BPF only to a file descriptor.
  const int fd = memfd_create("cmc-seccomp", MFD_CLOEXEC);
  require(fd < 0 ? -errno : 0, "memfd_create");
  require(seccomp_export_bpf(filter.ctx, fd), "export");
  const off_t size = lseek(fd, 0, SEEK_END);
  std::vector<sock_filter> program(static_cast<std::size_t>(size) /
                                   sizeof(sock_filter));
  const ssize_t got = pread(fd, program.data(), size, 0);
  close(fd);
  require(got == size ? 0 : -EIO, "reading the exported program");
  return program;
}

} // namespace

std::span<const TrappedSyscall> trapped_syscalls() { return kTable; }

const TrappedSyscall *trapped_syscall(unsigned long data) {
  return data < kTable.size() ? &kTable[data] : nullptr;
}

const sock_fprog &seccomp_program() {
  static const std::vector<sock_filter> program =
      build_program(SCMP_ACT_ALLOW, -1);
  static const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                                const_cast<sock_filter *>(program.data())};
  return fprog;
}

std::vector<sock_filter> observing_program(int report_fd) {
  return build_program(SCMP_ACT_TRACE(kObserveRow), report_fd);
}

} // namespace cmc::tracer
