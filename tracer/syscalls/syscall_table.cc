#include "tracer/syscalls/syscall_table.h"

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

#include "decoder/syscall_scan.h"
#include "tracer/syscalls/environment.h"
#include "tracer/syscalls/input_wait.h"
#include "tracer/syscalls/timed_waits.h"
#include "tracer/syscalls/timer_fd_calls.h"
#include "tracer/syscalls/write_paths.h"

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
    {"read", SYS_read, "dou", kDesc, on_read, {}, fd_blocks},
    {"readv", SYS_readv, "dpd", kDesc, wait_for_input, {}, fd_blocks},
    {"write", SYS_write, "diu", kDesc},
    {"writev", SYS_writev, "dpd", kDesc},
    {"pread64", SYS_pread64, "doud", kDesc},
    {"pwrite64", SYS_pwrite64, "diud", kDesc},
    {"open",
     SYS_open,
     "s{open}{open_mode}",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {1, kWrites},
     {{{-1, 0}}}},
    {"openat",
     SYS_openat,
     "{atfd}s{open}{open_mode}",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {2, kWrites},
     {{{0, 1}}}},
    {"openat2",
     SYS_openat2,
     "{atfd}spu",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"creat",
     SYS_creat,
     "s{mode}",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"truncate",
     SYS_truncate,
     "sD",
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"close", SYS_close, "d", kDesc},
    {"newfstatat", SYS_newfstatat, "{atfd}sp{at}", kDesc | kFile},
    {"fstat", SYS_fstat, "dp", kDesc},
    {"lseek", SYS_lseek, "dD{whence}", kDesc},
    {"access", SYS_access, "s{access}", kFile},
    {"faccessat2", SYS_faccessat2, "{atfd}s{access}{accessat}", kDesc | kFile},
    {"unlink",
     SYS_unlink,
     "s",
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"unlinkat",
     SYS_unlinkat,
     "{atfd}s{unlinkat}",
     kDesc | kFile,
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
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}, {-1, 1}}}},
    {"renameat",
     SYS_renameat,
     "{atfd}s{atfd}s",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}, {2, 3}}}},
    {"renameat2",
     SYS_renameat2,
     "{atfd}s{atfd}sx",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}, {2, 3}}}},
    {"link",
     SYS_link,
     "ss",
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 1}}}},
    {"linkat",
     SYS_linkat,
     "{atfd}s{atfd}s{at}",
     kDesc | kFile,
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
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 1}}}},
    {"symlinkat",
     SYS_symlinkat,
     "s{atfd}s",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{1, 2}}}},
    {"mkdir",
     SYS_mkdir,
     "s{mode}",
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"mkdirat",
     SYS_mkdirat,
     "{atfd}s{mode}",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"mknod",
     SYS_mknod,
     "s{mode}x",
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"mknodat",
     SYS_mknodat,
     "{atfd}s{mode}x",
     kDesc | kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{0, 1}}}},
    {"rmdir",
     SYS_rmdir,
     "s",
     kFile,
     on_write_path,
     {},
     {},
     {},
     -1,
     {},
     {{{-1, 0}}}},
    {"chdir", SYS_chdir, "s", kFile, unrestorable},
    {"fchdir", SYS_fchdir, "d", kDesc, unrestorable},
    {"readlink", SYS_readlink, "sou", kFile},
    {"eventfd2", SYS_eventfd2, "u{efd}", kDesc},
    {"pipe2", SYS_pipe2, "p{fdflags}", kDesc},
    {"dup", SYS_dup, "d", kDesc},
    {"dup2", SYS_dup2, "dd", kDesc},
    {"dup3", SYS_dup3, "dd{fdflags}", kDesc},
    {"fcntl", SYS_fcntl, "d{fcntl}{fcntl_arg}", kDesc},
    {"ioctl", SYS_ioctl, "d{ioctl}p", kDesc},
    // Sockets.
    {"socket", SYS_socket, "{family}{socktype}{protocol}", kNetwork},
    {"bind", SYS_bind, "d{sockaddr}u", kNetwork},
    {"listen", SYS_listen, "dd", kNetwork, on_listen},
    {"accept", SYS_accept, "dpp", kNetwork, wait_for_input, {}, fd_blocks},
    {"accept4",
     SYS_accept4,
     "dpp{sockflags}",
     kNetwork,
     wait_for_input,
     {},
     fd_blocks},
    {"connect", SYS_connect, "d{sockaddr}u", kNetwork},
    {"shutdown", SYS_shutdown, "d{shut}", kNetwork},
    {"sendto", SYS_sendto, "diu{msg}{sockaddr}u", kNetwork},
    {"recvfrom",
     SYS_recvfrom,
     "dou{msg}pp",
     kNetwork,
     wait_for_input,
     {},
     recv_blocks,
     {},
     3},
    {"sendmsg", SYS_sendmsg, "dp{msg}", kNetwork},
    {"recvmsg",
     SYS_recvmsg,
     "dp{msg}",
     kNetwork,
     wait_for_input,
     {},
     recv_blocks,
     {},
     2},
    {"recvmmsg",
     SYS_recvmmsg,
     {},
     kNetwork,
     wait_for_input,
     {},
     recv_blocks,
     {},
     3},
    {"setsockopt", SYS_setsockopt, "d{sol}{sockopt}pu", kNetwork},
    {"getsockopt", SYS_getsockopt, "d{sol}{sockopt}pp", kNetwork},
    {"getsockname", SYS_getsockname, "dpp", kNetwork},
    {"getpeername", SYS_getpeername, "dpp", kNetwork},
    // Waits for any of several descriptors.
    {"poll",
     SYS_poll,
     "{pollfd}ud",
     kDesc,
     wait_for_input,
     {},
     poll_blocks,
     millis(2)},
    {"ppoll",
     SYS_ppoll,
     "{pollfd}upp",
     kDesc,
     wait_for_input,
     {},
     poll_blocks,
     timespec_at(2)},
    {"select",
     SYS_select,
     "dpppp",
     kDesc,
     wait_for_input,
     {},
     select_blocks,
     timeval_at(4)},
    {"pselect6",
     SYS_pselect6,
     "dppppp",
     kDesc,
     wait_for_input,
     {},
     select_blocks,
     timespec_at(4)},
    {"epoll_create1", SYS_epoll_create1, "{epoll_flags}", kDesc},
    {"epoll_ctl", SYS_epoll_ctl, "d{epoll_op}d{epoll_event}", kDesc},
    {"epoll_wait",
     SYS_epoll_wait,
     "dpdd",
     kDesc,
     wait_for_input,
     {},
     epoll_blocks,
     millis(3)},
    {"epoll_pwait",
     SYS_epoll_pwait,
     "dpddp",
     kDesc,
     wait_for_input,
     {},
     epoll_blocks,
     millis(3)},
    {"epoll_pwait2",
     SYS_epoll_pwait2,
     {},
     kDesc,
     wait_for_input,
     {},
     epoll_blocks,
     timespec_at(3)},
    // Sleeps, futex waits and timers.
    {"nanosleep",
     SYS_nanosleep,
     "{timespec}p",
     {},
     on_nanosleep,
     executor::Source::kSleep},
    {"clock_nanosleep",
     SYS_clock_nanosleep,
     "{clock}{abstime}{timespec}p",
     {},
     on_clock_nanosleep,
     executor::Source::kSleep},
    {"futex", SYS_futex, "p{futex}dppd", {}, on_futex},
    {"timerfd_create", SYS_timerfd_create, "{clock}{tfd}", kDesc},
    {"timerfd_settime", SYS_timerfd_settime, "d{tfd_settime}{itimerspec}p",
     kDesc, on_timerfd_settime, executor::Source::kTimerfd},
    {"timerfd_gettime",
     SYS_timerfd_gettime,
     {},
     kDesc,
     on_timerfd_gettime,
     executor::Source::kTimerfd},
    {"alarm", SYS_alarm, {}, {}, on_alarm},
    {"setitimer", SYS_setitimer, {}, {}, on_setitimer},
    {"timer_settime", SYS_timer_settime, {}, {}, on_timer_settime},
    // Time and randomness.
    {"clock_gettime",
     SYS_clock_gettime,
     "{clock}{timespec_out}",
     {},
     answer_clock_gettime,
     executor::Source::kClockGettime},
    {"gettimeofday",
     SYS_gettimeofday,
     "pp",
     {},
     answer_gettimeofday,
     executor::Source::kGettimeofday},
    {"time", SYS_time, "p", {}, answer_time, executor::Source::kTime},
    {"clock_getres",
     SYS_clock_getres,
     {},
     {},
     answer_clock_getres,
     executor::Source::kClockGetres},
    {"getcpu", SYS_getcpu, {}, {}, answer_getcpu, executor::Source::kGetcpu},
    {"getrandom",
     SYS_getrandom,
     "ou{grnd}",
     {},
     answer_getrandom,
     executor::Source::kGetrandom},
    {"times", SYS_times, {}, {}, pass_through, executor::Source::kTimes},
    {"getrusage",
     SYS_getrusage,
     {},
     {},
     pass_through,
     executor::Source::kTimes},
    {"sysinfo", SYS_sysinfo, "p", {}, pass_through, executor::Source::kTimes},
    // Memory.
    {"mmap", SYS_mmap, "pu{prot}{map}du=p", kDesc | kMemory},
    {"munmap", SYS_munmap, "pu", kMemory},
    {"mprotect", SYS_mprotect, "pu{prot}", kMemory},
    {"brk", SYS_brk, "p=p", kMemory},
    {"madvise", SYS_madvise, "pu{madv}", kMemory},
    // Processes, threads and signals.
    {"rt_sigaction", SYS_rt_sigaction, "{signal}ppu", kSignal, unrestorable},
    {"sigaltstack", SYS_sigaltstack, "pp", kSignal, unrestorable},
    {"rt_sigprocmask", SYS_rt_sigprocmask, "{sighow}ppu", kSignal},
    {"getpid", SYS_getpid, "", {}},
    {"gettid", SYS_gettid, "", {}},
    {"getuid", SYS_getuid, "", {}},
    {"geteuid", SYS_geteuid, "", {}},
    {"uname", SYS_uname, "p", {}},
    {"prlimit64", SYS_prlimit64, "d{rlimit}pp", {}, unrestorable},
    {"setrlimit", SYS_setrlimit, "{rlimit}p", {}, unrestorable},
    {"exit", SYS_exit, "d", kProcess},
    {"exit_group", SYS_exit_group, "d", kProcess},
    {"kill", SYS_kill, "d{signal}", kSignal},
    {"execve", SYS_execve, "spp", kFile | kProcess},
    {"set_tid_address", SYS_set_tid_address, "p", {}},
    {"set_robust_list", SYS_set_robust_list, "pu", {}},
    {"rseq", SYS_rseq, "puxx", {}, refuse_enosys, executor::Source::kRseq},
    {"io_uring_setup",
     SYS_io_uring_setup,
     {},
     {},
     refuse_enosys,
     executor::Source::kIoUring},
    {"arch_prctl", SYS_arch_prctl, "{arch_prctl}p", {}},
    {"prctl", SYS_prctl, "{prctl}xxxx", {}},
    {"personality", SYS_personality, "x", {}, unrestorable},
});
// The rows of the calls that are not in the table, under observing_program,
// and of the calls of a foreign ABI (int 0x80 from x86-64, x32).
constexpr Syscall kOther{"(any other)", -1, {}, {}, pass_through};
constexpr Syscall kForeign{"(foreign ABI)", -1, {}, {}, on_foreign_abi};
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
                           const decoder::MemoryReader &read,
                           const decoder::FormatOptions &options) {
  return format_call(number, args, result, read, options).text();
}

decoder::FormattedCall format_call(long number,
                                   const std::array<std::uint64_t, 6> &args,
                                   std::optional<long> result,
                                   const decoder::MemoryReader &read,
                                   const decoder::FormatOptions &options) {
  const Syscall *row = syscall_of(number);
  return decoder::format_call(number,
                              row != nullptr ? row->shape : std::nullopt, args,
                              result, read, options);
}

namespace {

struct ClassName {
  std::string_view name;
  TraceClasses bits;
};

constexpr auto kClassNames = std::to_array<ClassName>({
    {"%file", kFile},
    {"%desc", kDesc},
    {"%network", kNetwork},
    {"%net", kNetwork},
    {"%memory", kMemory},
    {"%process", kProcess},
    {"%signal", kSignal},
});

// The calls one word of a trace set names, or nothing.
std::optional<std::vector<long>> calls_named(std::string_view word) {
  if (word == "all" || word == "none") {
    std::vector<long> all;
    if (word == "all")
      for (long number = 0; number < 1024; ++number)
        if (!decoder::syscall_name(number).empty())
          all.push_back(number);
    return all;
  }
  const auto *named = std::ranges::find(kClassNames, word, &ClassName::name);
  if (named != kClassNames.end()) {
    std::vector<long> numbers;
    for (const Syscall &call : kCalls)
      if ((call.classes & named->bits) != 0)
        numbers.push_back(call.number);
    return numbers;
  }
  if (const auto number = decoder::syscall_number(std::string(word)))
    return std::vector<long>{*number};
  return std::nullopt;
}

} // namespace

Result<TraceFilter> TraceFilter::parse(std::string_view list) {
  TraceFilter filter;
  filter.negated_ = list.starts_with('!');
  if (filter.negated_)
    list.remove_prefix(1);
  while (true) {
    const auto comma = list.find(',');
    const std::string_view word = list.substr(0, comma);
    const auto numbers = calls_named(word);
    if (!numbers)
      return Error{fmt::format(
          "-e trace: '{}' is no system call or class (%file, %desc, "
          "%network, %memory, %process, %signal)",
          word)};
    filter.numbers_.insert(filter.numbers_.end(), numbers->begin(),
                           numbers->end());
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  std::ranges::sort(filter.numbers_);
  return filter;
}

bool TraceFilter::shows(long number) const {
  return std::ranges::binary_search(numbers_, number) != negated_;
}

const sock_fprog &seccomp_program() {
  static const std::vector<sock_filter> program =
      build_program(SCMP_ACT_ALLOW, -1);
  static const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                                const_cast<sock_filter *>(program.data())};
  return fprog;
}

SeccompFilter seccomp_filter(bool observe) {
  if (observe)
    return {.program = nullptr, .build = observing_program};
  return {.program = &seccomp_program(), .build = nullptr};
}

std::vector<sock_filter> observing_program(int report_fd) {
  return build_program(SCMP_ACT_TRACE(kOtherData), report_fd);
}

} // namespace cmc::tracer
