#include "tracer/syscall_table.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "tracer/environment.h"
#include "tracer/input_wait.h"
#include "tracer/run_files.h"
#include "tracer/timed_waits.h"
#include "tracer/timer_fds.h"

namespace cmc::tracer {
namespace {

// The handlers of no file of their own.

Result<Action> pass_through(SeccompStop & /*stop*/) { return Action::run(); }

// A call whose effect on the kernel's side of the target a snapshot
// cannot undo: noted, then run.
Result<Action> unrestorable(SeccompStop &stop) {
  ++stop.unrestorable_calls;
  return Action::run();
}

// A call that would bypass the tracer (rseq, io_uring) fails as on a kernel
// without it; programs then fall back to plain system calls.
Result<Action> refuse_enosys(SeccompStop & /*stop*/) {
  return Action::answer(-ENOSYS);
}

Result<Action> on_listen(SeccompStop &stop) {
  stop.listening_fd = static_cast<int>(stop.regs.rdi);
  return Action::run();
}

Result<Action> on_foreign_abi(SeccompStop & /*stop*/) {
  return Error{"the target made a system call of another ABI (int 0x80 or "
               "x32), which cmc cannot follow"};
}

// Timeouts: a count of milliseconds, or a pointer to a timespec or timeval,
// in argument arg.
constexpr Timeout millis(std::uint8_t arg) {
  return {Timeout::Kind::kMillis, arg};
}
constexpr Timeout timespec_at(std::uint8_t arg) {
  return {Timeout::Kind::kTimespec, arg};
}
constexpr Timeout timeval_at(std::uint8_t arg) {
  return {Timeout::Kind::kTimeval, arg};
}

// Everything cmc knows of a system call is its row here, after rr's
// syscalls.py: the decoder's formatter takes the row's shape, the seccomp
// filter its number and trap condition, the Session its handler. The table
// lives in the tracer, not the decoder, because a row's handler, its
// Source and its readiness test are the tracer's; the decoder's formatter
// only needs the shape letters, which it is passed. A call cmc only shows
// (write, mmap...) is a row with no handler. Adding a call is adding a row
// (and its handler, when no existing one fits). A row is {name, number,
// shape, handler, source, blocks, timeout, flags_arg, trap_if}, the fields
// it does not need left at their defaults.
// An open that may write: the filter stops it only then (reads run freely).
constexpr std::uint64_t kWrites = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
constexpr auto kCalls = std::to_array<Syscall>({
    // Files and descriptors.
    {"read", SYS_read, "dou", on_read, {}, fd_blocks},
    {"readv", SYS_readv, "dpd", wait_for_input, {}, fd_blocks},
    {"write", SYS_write, "diu"},
    {"writev", SYS_writev, "dpd"},
    {"pread64", SYS_pread64, "doud"},
    {"pwrite64", SYS_pwrite64, "diud"},
    {"open",
     SYS_open,
     "sxx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {1, kWrites},
     {{{-1, 0}}}},
    {"openat",
     SYS_openat,
     "dsxx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {2, kWrites},
     {{{0, 1}}}},
    {"openat2",
     SYS_openat2,
     "dspu",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"creat", SYS_creat, "sx", on_write_path, {}, {}, {}, -1, {}, {{{-1, 0}}}},
    {"truncate",
     SYS_truncate,
     "sD",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"close", SYS_close, "d"},
    {"newfstatat", SYS_newfstatat, "dspx"},
    {"fstat", SYS_fstat, "dp"},
    {"lseek", SYS_lseek, "dDd"},
    {"access", SYS_access, "sx"},
    {"faccessat2", SYS_faccessat2, "dsxx"},
    {"unlink", SYS_unlink, "s", on_write_path, {}, {}, {}, -1, {}, {{{-1, 0}}}},
    {"unlinkat",
     SYS_unlinkat,
     "dsx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"rename",
     SYS_rename,
     "ss",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}, {-1, 1}}}},
    {"renameat",
     SYS_renameat,
     "dsds",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}, {2, 3}}}},
    {"renameat2",
     SYS_renameat2,
     "dsdsx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}, {2, 3}}}},
    {"link", SYS_link, "ss", on_write_path, {}, {}, {}, -1, {}, {{{-1, 1}}}},
    {"linkat",
     SYS_linkat,
     "dsdsx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{2, 3}}}},
    {"symlink",
     SYS_symlink,
     "ss",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 1}}}},
    {"symlinkat",
     SYS_symlinkat,
     "sds",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{1, 2}}}},
    {"mkdir", SYS_mkdir, "sx", on_write_path, {}, {}, {}, -1, {}, {{{-1, 0}}}},
    {"mkdirat",
     SYS_mkdirat,
     "dsx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"mknod", SYS_mknod, "sxx", on_write_path, {}, {}, {}, -1, {}, {{{-1, 0}}}},
    {"mknodat",
     SYS_mknodat,
     "dsxx",
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"rmdir", SYS_rmdir, "s", on_write_path, {}, {}, {}, -1, {}, {{{-1, 0}}}},
    {"chdir", SYS_chdir, "s", unrestorable},
    {"fchdir", SYS_fchdir, "d", unrestorable},
    {"readlink", SYS_readlink, "sou"},
    {"eventfd2", SYS_eventfd2, "ux"},
    {"pipe2", SYS_pipe2, "px"},
    {"dup", SYS_dup, "d"},
    {"dup2", SYS_dup2, "dd"},
    {"dup3", SYS_dup3, "ddx"},
    {"fcntl", SYS_fcntl, "ddx"},
    {"ioctl", SYS_ioctl, "dxp"},
    // Sockets.
    {"socket", SYS_socket, "dxd"},
    {"bind", SYS_bind, "dpu"},
    {"listen", SYS_listen, "dd", on_listen},
    {"accept", SYS_accept, "dpp", wait_for_input, {}, fd_blocks},
    {"accept4", SYS_accept4, "dppx", wait_for_input, {}, fd_blocks},
    {"connect", SYS_connect, "dpu"},
    {"shutdown", SYS_shutdown, "dd"},
    {"sendto", SYS_sendto, "diuxpu"},
    {"recvfrom",
     SYS_recvfrom,
     "douxpp",
     wait_for_input,
     {},
     recv_blocks,
     {},
     3},
    {"sendmsg", SYS_sendmsg, "dpx"},
    {"recvmsg", SYS_recvmsg, "dpx", wait_for_input, {}, recv_blocks, {}, 2},
    {"recvmmsg", SYS_recvmmsg, {}, wait_for_input, {}, recv_blocks, {}, 3},
    {"setsockopt", SYS_setsockopt, "dddpu"},
    {"getsockopt", SYS_getsockopt, "dddpp"},
    {"getsockname", SYS_getsockname, "dpp"},
    {"getpeername", SYS_getpeername, "dpp"},
    // Waits for any of several descriptors.
    {"poll", SYS_poll, "pud", wait_for_input, {}, poll_blocks, millis(2)},
    {"ppoll",
     SYS_ppoll,
     "pupp",
     wait_for_input,
     {},
     poll_blocks,
     timespec_at(2)},
    {"select",
     SYS_select,
     "dpppp",
     wait_for_input,
     {},
     select_blocks,
     timeval_at(4)},
    {"pselect6",
     SYS_pselect6,
     "dppppp",
     wait_for_input,
     {},
     select_blocks,
     timespec_at(4)},
    {"epoll_create1", SYS_epoll_create1, "x"},
    {"epoll_ctl", SYS_epoll_ctl, "dddp"},
    {"epoll_wait",
     SYS_epoll_wait,
     "dpdd",
     wait_for_input,
     {},
     epoll_blocks,
     millis(3)},
    {"epoll_pwait",
     SYS_epoll_pwait,
     "dpddp",
     wait_for_input,
     {},
     epoll_blocks,
     millis(3)},
    {"epoll_pwait2",
     SYS_epoll_pwait2,
     {},
     wait_for_input,
     {},
     epoll_blocks,
     timespec_at(3)},
    // Sleeps, futex waits and timers.
    {"nanosleep", SYS_nanosleep, "pp", on_nanosleep, Source::kSleep},
    {"clock_nanosleep", SYS_clock_nanosleep, "dxpp", on_clock_nanosleep,
     Source::kSleep},
    {"futex", SYS_futex, "pxdppd", on_futex},
    {"timerfd_create", SYS_timerfd_create, "dx"},
    {"timerfd_settime", SYS_timerfd_settime, "dxpp", on_timerfd_settime,
     Source::kTimerfd},
    {"timerfd_gettime",
     SYS_timerfd_gettime,
     {},
     on_timerfd_gettime,
     Source::kTimerfd},
    {"alarm", SYS_alarm, {}, on_alarm},
    {"setitimer", SYS_setitimer, {}, on_setitimer},
    {"timer_settime", SYS_timer_settime, {}, on_timer_settime},
    // Time and randomness.
    {"clock_gettime", SYS_clock_gettime, "dp", answer_clock_gettime,
     Source::kClockGettime},
    {"gettimeofday", SYS_gettimeofday, "pp", answer_gettimeofday,
     Source::kGettimeofday},
    {"time", SYS_time, "p", answer_time, Source::kTime},
    {"clock_getres",
     SYS_clock_getres,
     {},
     answer_clock_getres,
     Source::kClockGetres},
    {"getcpu", SYS_getcpu, {}, answer_getcpu, Source::kGetcpu},
    {"getrandom", SYS_getrandom, "oux", answer_getrandom, Source::kGetrandom},
    {"times", SYS_times, {}, pass_through, Source::kTimes},
    {"getrusage", SYS_getrusage, {}, pass_through, Source::kTimes},
    {"sysinfo", SYS_sysinfo, "p", pass_through, Source::kTimes},
    // Memory.
    {"mmap", SYS_mmap, "puxxdx"},
    {"munmap", SYS_munmap, "pu"},
    {"mprotect", SYS_mprotect, "pux"},
    {"brk", SYS_brk, "p"},
    {"madvise", SYS_madvise, "pud"},
    // Processes, threads and signals.
    {"rt_sigaction", SYS_rt_sigaction, "dppu", unrestorable},
    {"sigaltstack", SYS_sigaltstack, "pp", unrestorable},
    {"rt_sigprocmask", SYS_rt_sigprocmask, "dppu"},
    {"getpid", SYS_getpid, ""},
    {"gettid", SYS_gettid, ""},
    {"getuid", SYS_getuid, ""},
    {"geteuid", SYS_geteuid, ""},
    {"uname", SYS_uname, "p"},
    {"prlimit64", SYS_prlimit64, "ddpp", unrestorable},
    {"setrlimit", SYS_setrlimit, "dp", unrestorable},
    {"exit", SYS_exit, "d"},
    {"exit_group", SYS_exit_group, "d"},
    {"kill", SYS_kill, "dd"},
    {"execve", SYS_execve, "spp"},
    {"set_tid_address", SYS_set_tid_address, "p"},
    {"set_robust_list", SYS_set_robust_list, "pu"},
    {"rseq", SYS_rseq, "puxx", refuse_enosys, Source::kRseq},
    {"io_uring_setup", SYS_io_uring_setup, {}, refuse_enosys, Source::kIoUring},
    {"arch_prctl", SYS_arch_prctl, "xp"},
    {"prctl", SYS_prctl, "dxxxx"},
    {"personality", SYS_personality, "x", unrestorable},
});
// The rows of the calls that are not in the table, under observing_program,
// and of the calls of a foreign ABI (int 0x80 from x86-64, x32).
constexpr Syscall kOther{"(any other)", -1, {}, pass_through};
constexpr Syscall kForeign{"(foreign ABI)", -1, {}, on_foreign_abi};
#pragma GCC diagnostic pop
constexpr std::uint16_t kOtherData = kCalls.size();
constexpr std::uint16_t kForeignData = kCalls.size() + 1;

struct FilterContext {
  scmp_filter_ctx ctx;
  FilterContext(const FilterContext &) = delete;
  FilterContext &operator=(const FilterContext &) = delete;
  explicit FilterContext(std::uint32_t default_action)
      : ctx(seccomp_init(default_action)) {}
  ~FilterContext() { seccomp_release(ctx); }
};

void require(int rc, std::string_view what) {
  if (rc != 0)
    throw std::runtime_error(
        fmt::format("libseccomp: {}: {}", what, std::strerror(-rc)));
}

// The rule (or rules) that stop on the call of row data.
void add_trap(scmp_filter_ctx ctx, std::uint16_t data) {
  const Syscall &call = kCalls[data];
  const auto nr = static_cast<int>(call.number);
  if (call.trap_if.arg < 0) {
    require(seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), nr, 0), call.name);
    return;
  }
  for (std::uint64_t bits = call.trap_if.any_bit; bits != 0; bits &= bits - 1) {
    const std::uint64_t bit = bits & -bits;
    require(seccomp_rule_add(ctx, SCMP_ACT_TRACE(data), nr, 1,
                             SCMP_CMP(static_cast<unsigned>(call.trap_if.arg),
                                      SCMP_CMP_MASKED_EQ, bit, bit)),
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
                           SCMP_ACT_TRACE(kForeignData)),
          "bad-arch action");
  for (std::size_t data = 0; data < kCalls.size(); ++data)
    if (kCalls[data].handler != nullptr)
      add_trap(filter.ctx, static_cast<std::uint16_t>(data));
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

std::span<const Syscall> syscalls() { return kCalls; }

const Syscall *syscall_at(unsigned long data) {
  if (data < kCalls.size())
    return &kCalls[data];
  if (data == kOtherData)
    return &kOther;
  return data == kForeignData ? &kForeign : nullptr;
}

const Syscall *syscall_of(long number) {
  const auto *const row = std::ranges::find(kCalls, number, &Syscall::number);
  return row != kCalls.end() ? row : nullptr;
}

std::string format_syscall(long number,
                           const std::array<std::uint64_t, 6> &args,
                           std::optional<long> result,
                           const decoder::MemoryReader &read) {
  const Syscall *row = syscall_of(number);
  return decoder::format_syscall(
      number, row != nullptr ? row->shape : std::nullopt, args, result, read);
}

const sock_fprog &seccomp_program() {
  static const std::vector<sock_filter> program =
      build_program(SCMP_ACT_ALLOW, -1);
  static const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                                const_cast<sock_filter *>(program.data())};
  return fprog;
}

std::vector<sock_filter> observing_program(int report_fd) {
  return build_program(SCMP_ACT_TRACE(kOtherData), report_fd);
}

} // namespace cmc::tracer
