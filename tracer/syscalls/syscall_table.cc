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
#include "tracer/syscalls/child_waits.h"
#include "tracer/syscalls/environment.h"
#include "tracer/syscalls/file_syncs.h"
#include "tracer/syscalls/input_wait.h"
#include "tracer/syscalls/signal_timer_calls.h"
#include "tracer/syscalls/socket_times.h"
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
  stop.listening_fd = static_cast<int>(stop.regs.arg(0));
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
// (and its handler, when no existing one fits). A row names the fields it
// sets, in the order of Syscall's; the others keep their defaults.
// An open that may write: the filter stops it only then (reads run freely).
constexpr std::uint64_t kWrites = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

constexpr auto kCalls = std::to_array<Syscall>({
    // Files and descriptors.
    {.name = "read",
     .number = SYS_read,
     .shape = "dou",
     .classes = kDesc,
     .handler = on_read,
     .blocks = fd_blocks},
    {.name = "readv",
     .number = SYS_readv,
     .shape = "dpd",
     .classes = kDesc,
     .handler = on_readv,
     .blocks = fd_blocks},
    {.name = "write", .number = SYS_write, .shape = "diu", .classes = kDesc},
    {.name = "writev", .number = SYS_writev, .shape = "dpd", .classes = kDesc},
    {.name = "pread64",
     .number = SYS_pread64,
     .shape = "doud",
     .classes = kDesc,
     .handler = on_pread},
    {.name = "pwrite64",
     .number = SYS_pwrite64,
     .shape = "diud",
     .classes = kDesc},
    {.name = "open",
     .number = SYS_open,
     .shape = "s{open}{open_mode}",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .trap_if = {1, kWrites},
     .paths = {{{-1, 0}}}},
    {.name = "openat",
     .number = SYS_openat,
     .shape = "{atfd}s{open}{open_mode}",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .trap_if = {2, kWrites},
     .paths = {{{0, 1}}}},
    {.name = "openat2",
     .number = SYS_openat2,
     .shape = "{atfd}spu",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{0, 1}}}},
    {.name = "creat",
     .number = SYS_creat,
     .shape = "s{mode}",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}}}},
    {.name = "truncate",
     .number = SYS_truncate,
     .shape = "sD",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}}}},
    {.name = "close", .number = SYS_close, .shape = "d", .classes = kDesc},
    {.name = "fsync",
     .number = SYS_fsync,
     .shape = "d",
     .classes = kDesc,
     .handler = on_fsync},
    {.name = "fdatasync",
     .number = SYS_fdatasync,
     .shape = "d",
     .classes = kDesc,
     .handler = on_fsync},
    {.name = "sync_file_range",
     .number = SYS_sync_file_range,
     .shape = "dDDx",
     .classes = kDesc,
     .handler = on_sync_file_range,
     .trap_if = {3, SYNC_FILE_RANGE_WAIT_AFTER}},
    {.name = "syncfs",
     .number = SYS_syncfs,
     .shape = "d",
     .classes = kDesc,
     .handler = on_sync},
    {.name = "sync", .number = SYS_sync, .shape = "", .handler = on_sync},
    {.name = "msync",
     .number = SYS_msync,
     .shape = "pux",
     .classes = kMemory,
     .handler = on_msync,
     .trap_if = {2, MS_SYNC}},
    {.name = "newfstatat",
     .number = SYS_newfstatat,
     .shape = "{atfd}sp{at}",
     .classes = kDesc | kFile},
    {.name = "fstat", .number = SYS_fstat, .shape = "dp", .classes = kDesc},
    {.name = "lseek",
     .number = SYS_lseek,
     .shape = "dD{whence}",
     .classes = kDesc},
    {.name = "access",
     .number = SYS_access,
     .shape = "s{access}",
     .classes = kFile},
    {.name = "faccessat2",
     .number = SYS_faccessat2,
     .shape = "{atfd}s{access}{accessat}",
     .classes = kDesc | kFile},
    {.name = "unlink",
     .number = SYS_unlink,
     .shape = "s",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}}}},
    {.name = "unlinkat",
     .number = SYS_unlinkat,
     .shape = "{atfd}s{unlinkat}",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{0, 1}}}},
    {.name = "rename",
     .number = SYS_rename,
     .shape = "ss",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}, {-1, 1}}}},
    {.name = "renameat",
     .number = SYS_renameat,
     .shape = "{atfd}s{atfd}s",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{0, 1}, {2, 3}}}},
    {.name = "renameat2",
     .number = SYS_renameat2,
     .shape = "{atfd}s{atfd}sx",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{0, 1}, {2, 3}}}},
    {.name = "link",
     .number = SYS_link,
     .shape = "ss",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 1}}}},
    {.name = "linkat",
     .number = SYS_linkat,
     .shape = "{atfd}s{atfd}s{at}",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{2, 3}}}},
    {.name = "symlink",
     .number = SYS_symlink,
     .shape = "ss",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 1}}}},
    {.name = "symlinkat",
     .number = SYS_symlinkat,
     .shape = "s{atfd}s",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{1, 2}}}},
    {.name = "mkdir",
     .number = SYS_mkdir,
     .shape = "s{mode}",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}}}},
    {.name = "mkdirat",
     .number = SYS_mkdirat,
     .shape = "{atfd}s{mode}",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{0, 1}}}},
    {.name = "mknod",
     .number = SYS_mknod,
     .shape = "s{mode}x",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}}}},
    {.name = "mknodat",
     .number = SYS_mknodat,
     .shape = "{atfd}s{mode}x",
     .classes = kDesc | kFile,
     .handler = on_write_path,
     .paths = {{{0, 1}}}},
    {.name = "rmdir",
     .number = SYS_rmdir,
     .shape = "s",
     .classes = kFile,
     .handler = on_write_path,
     .paths = {{{-1, 0}}}},
    {.name = "chdir",
     .number = SYS_chdir,
     .shape = "s",
     .classes = kFile,
     .handler = unrestorable},
    {.name = "fchdir",
     .number = SYS_fchdir,
     .shape = "d",
     .classes = kDesc,
     .handler = unrestorable},
    {.name = "readlink",
     .number = SYS_readlink,
     .shape = "sou",
     .classes = kFile},
    {.name = "eventfd2",
     .number = SYS_eventfd2,
     .shape = "u{efd}",
     .classes = kDesc},
    {.name = "pipe2",
     .number = SYS_pipe2,
     .shape = "p{fdflags}",
     .classes = kDesc},
    {.name = "dup", .number = SYS_dup, .shape = "d", .classes = kDesc},
    {.name = "dup2", .number = SYS_dup2, .shape = "dd", .classes = kDesc},
    {.name = "dup3",
     .number = SYS_dup3,
     .shape = "dd{fdflags}",
     .classes = kDesc},
    {.name = "fcntl",
     .number = SYS_fcntl,
     .shape = "d{fcntl}{fcntl_arg}",
     .classes = kDesc},
    {.name = "ioctl",
     .number = SYS_ioctl,
     .shape = "d{ioctl}p",
     .classes = kDesc},
    // Sockets.
    {.name = "socket",
     .number = SYS_socket,
     .shape = "{family}{socktype}{protocol}",
     .classes = kNetwork},
    {.name = "bind",
     .number = SYS_bind,
     .shape = "d{sockaddr}u",
     .classes = kNetwork},
    {.name = "listen",
     .number = SYS_listen,
     .shape = "dd",
     .classes = kNetwork,
     .handler = on_listen},
    {.name = "accept",
     .number = SYS_accept,
     .shape = "dpp",
     .classes = kNetwork,
     .handler = wait_for_input,
     .blocks = fd_blocks},
    {.name = "accept4",
     .number = SYS_accept4,
     .shape = "dpp{sockflags}",
     .classes = kNetwork,
     .handler = wait_for_input,
     .blocks = fd_blocks},
    {.name = "connect",
     .number = SYS_connect,
     .shape = "d{sockaddr}u",
     .classes = kNetwork},
    {.name = "shutdown",
     .number = SYS_shutdown,
     .shape = "d{shut}",
     .classes = kNetwork},
    {.name = "sendto",
     .number = SYS_sendto,
     .shape = "diu{msg}{sockaddr}u",
     .classes = kNetwork},
    {.name = "recvfrom",
     .number = SYS_recvfrom,
     .shape = "dou{msg}pp",
     .classes = kNetwork,
     .handler = on_recvfrom,
     .blocks = recv_blocks,
     .flags_arg = 3},
    {.name = "sendmsg",
     .number = SYS_sendmsg,
     .shape = "dp{msg}",
     .classes = kNetwork},
    {.name = "recvmsg",
     .number = SYS_recvmsg,
     .shape = "dp{msg}",
     .classes = kNetwork,
     .handler = on_recvmsg,
     .blocks = recv_blocks,
     .flags_arg = 2},
    {.name = "recvmmsg",
     .number = SYS_recvmmsg,
     .classes = kNetwork,
     .handler = on_recvmmsg,
     .blocks = recv_blocks,
     .flags_arg = 3},
    {.name = "setsockopt",
     .number = SYS_setsockopt,
     .shape = "d{sol}{sockopt}pu",
     .classes = kNetwork},
    {.name = "getsockopt",
     .number = SYS_getsockopt,
     .shape = "d{sol}{sockopt}pp",
     .classes = kNetwork,
     .handler = on_getsockopt},
    {.name = "getsockname",
     .number = SYS_getsockname,
     .shape = "dpp",
     .classes = kNetwork},
    {.name = "getpeername",
     .number = SYS_getpeername,
     .shape = "dpp",
     .classes = kNetwork},
    // Waits for any of several descriptors.
    {.name = "poll",
     .number = SYS_poll,
     .shape = "{pollfd}ud",
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = poll_blocks,
     .timeout = millis(2)},
    {.name = "ppoll",
     .number = SYS_ppoll,
     .shape = "{pollfd}upp",
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = poll_blocks,
     .timeout = timespec_at(2)},
    {.name = "select",
     .number = SYS_select,
     .shape = "dpppp",
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = select_blocks,
     .timeout = timeval_at(4)},
    {.name = "pselect6",
     .number = SYS_pselect6,
     .shape = "dppppp",
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = select_blocks,
     .timeout = timespec_at(4)},
    {.name = "epoll_create1",
     .number = SYS_epoll_create1,
     .shape = "{epoll_flags}",
     .classes = kDesc},
    {.name = "epoll_ctl",
     .number = SYS_epoll_ctl,
     .shape = "d{epoll_op}d{epoll_event}",
     .classes = kDesc},
    {.name = "epoll_wait",
     .number = SYS_epoll_wait,
     .shape = "dpdd",
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = epoll_blocks,
     .timeout = millis(3)},
    {.name = "epoll_pwait",
     .number = SYS_epoll_pwait,
     .shape = "dpddp",
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = epoll_blocks,
     .timeout = millis(3)},
    {.name = "epoll_pwait2",
     .number = SYS_epoll_pwait2,
     .classes = kDesc,
     .handler = wait_for_input,
     .blocks = epoll_blocks,
     .timeout = timespec_at(3)},
    // Sleeps, futex waits and timers.
    {.name = "nanosleep",
     .number = SYS_nanosleep,
     .shape = "{timespec}p",
     .handler = on_nanosleep,
     .source = executor::Source::kSleep},
    {.name = "clock_nanosleep",
     .number = SYS_clock_nanosleep,
     .shape = "{clock}{abstime}{timespec}p",
     .handler = on_clock_nanosleep,
     .source = executor::Source::kSleep},
    {.name = "futex",
     .number = SYS_futex,
     .shape = "p{futex}dppd",
     .handler = on_futex},
    {.name = "sched_yield",
     .number = SYS_sched_yield,
     .shape = "",
     .handler = on_sched_yield},
    {.name = "futex_waitv",
     .number = SYS_futex_waitv,
     .shape = "puxpd",
     .handler = on_futex_waitv},
    {.name = "timerfd_create",
     .number = SYS_timerfd_create,
     .shape = "{clock}{tfd}",
     .classes = kDesc},
    {.name = "timerfd_settime",
     .number = SYS_timerfd_settime,
     .shape = "d{tfd_settime}{itimerspec}p",
     .classes = kDesc,
     .handler = on_timerfd_settime,
     .source = executor::Source::kTimerfd},
    {.name = "timerfd_gettime",
     .number = SYS_timerfd_gettime,
     .classes = kDesc,
     .handler = on_timerfd_gettime,
     .source = executor::Source::kTimerfd},
    {.name = "alarm",
     .number = SYS_alarm,
     .shape = "u",
     .classes = kSignal,
     .handler = on_alarm,
     .source = executor::Source::kIntervalTimer},
    {.name = "setitimer",
     .number = SYS_setitimer,
     .shape = "dpp",
     .classes = kSignal,
     .handler = on_setitimer,
     .source = executor::Source::kIntervalTimer},
    {.name = "getitimer",
     .number = SYS_getitimer,
     .shape = "dp",
     .classes = kSignal,
     .handler = on_getitimer,
     .source = executor::Source::kIntervalTimer},
    {.name = "timer_create",
     .number = SYS_timer_create,
     .shape = "{clock}pp",
     .classes = kSignal,
     .handler = on_timer_create,
     .source = executor::Source::kPosixTimer},
    {.name = "timer_settime",
     .number = SYS_timer_settime,
     .shape = "d{abstime}{itimerspec}p",
     .classes = kSignal,
     .handler = on_timer_settime,
     .source = executor::Source::kPosixTimer},
    {.name = "timer_gettime",
     .number = SYS_timer_gettime,
     .shape = "dp",
     .classes = kSignal,
     .handler = on_timer_gettime,
     .source = executor::Source::kPosixTimer},
    {.name = "timer_getoverrun",
     .number = SYS_timer_getoverrun,
     .shape = "d",
     .classes = kSignal,
     .handler = on_timer_getoverrun,
     .source = executor::Source::kPosixTimer},
    {.name = "timer_delete",
     .number = SYS_timer_delete,
     .shape = "d",
     .classes = kSignal,
     .handler = on_timer_delete,
     .source = executor::Source::kPosixTimer},
    // Time and randomness.
    {.name = "clock_gettime",
     .number = SYS_clock_gettime,
     .shape = "{clock}{timespec_out}",
     .handler = answer_clock_gettime,
     .source = executor::Source::kClockGettime},
    {.name = "gettimeofday",
     .number = SYS_gettimeofday,
     .shape = "pp",
     .handler = answer_gettimeofday,
     .source = executor::Source::kGettimeofday},
    {.name = "time",
     .number = SYS_time,
     .shape = "p",
     .handler = answer_time,
     .source = executor::Source::kTime},
    {.name = "clock_getres",
     .number = SYS_clock_getres,
     .handler = answer_clock_getres,
     .source = executor::Source::kClockGetres},
    {.name = "getcpu",
     .number = SYS_getcpu,
     .handler = answer_getcpu,
     .source = executor::Source::kGetcpu},
    {.name = "sched_getaffinity",
     .number = SYS_sched_getaffinity,
     .shape = "duo",
     .handler = answer_sched_getaffinity,
     .source = executor::Source::kAffinity},
    {.name = "sched_setaffinity",
     .number = SYS_sched_setaffinity,
     .shape = "dup",
     .handler = answer_sched_setaffinity,
     .source = executor::Source::kAffinity},
    {.name = "getrandom",
     .number = SYS_getrandom,
     .shape = "ou{grnd}",
     .handler = answer_getrandom,
     .source = executor::Source::kGetrandom},
    {.name = "times",
     .number = SYS_times,
     .handler = pass_through,
     .source = executor::Source::kTimes},
    {.name = "getrusage",
     .number = SYS_getrusage,
     .handler = pass_through,
     .source = executor::Source::kTimes},
    {.name = "sysinfo",
     .number = SYS_sysinfo,
     .shape = "p",
     .handler = pass_through,
     .source = executor::Source::kTimes},
    // Memory.
    {.name = "mmap",
     .number = SYS_mmap,
     .shape = "pu{prot}{map}du=p",
     .classes = kDesc | kMemory},
    {.name = "munmap", .number = SYS_munmap, .shape = "pu", .classes = kMemory},
    {.name = "mprotect",
     .number = SYS_mprotect,
     .shape = "pu{prot}",
     .classes = kMemory},
    {.name = "brk", .number = SYS_brk, .shape = "p=p", .classes = kMemory},
    {.name = "madvise",
     .number = SYS_madvise,
     .shape = "pu{madv}",
     .classes = kMemory},
    // Processes, threads and signals.
    {.name = "rt_sigaction",
     .number = SYS_rt_sigaction,
     .shape = "{signal}ppu",
     .classes = kSignal,
     .handler = unrestorable},
    {.name = "sigaltstack",
     .number = SYS_sigaltstack,
     .shape = "pp",
     .classes = kSignal,
     .handler = unrestorable},
    {.name = "rt_sigprocmask",
     .number = SYS_rt_sigprocmask,
     .shape = "{sighow}ppu",
     .classes = kSignal},
    {.name = "getpid", .number = SYS_getpid, .shape = ""},
    {.name = "gettid", .number = SYS_gettid, .shape = ""},
    {.name = "getuid", .number = SYS_getuid, .shape = ""},
    {.name = "geteuid", .number = SYS_geteuid, .shape = ""},
    {.name = "uname", .number = SYS_uname, .shape = "p"},
    {.name = "prlimit64",
     .number = SYS_prlimit64,
     .shape = "d{rlimit}pp",
     .handler = unrestorable},
    {.name = "setrlimit",
     .number = SYS_setrlimit,
     .shape = "{rlimit}p",
     .handler = unrestorable},
    {.name = "exit",
     .number = SYS_exit,
     .shape = "d",
     .classes = kProcess,
     .handler = on_exit_thread},
    {.name = "exit_group",
     .number = SYS_exit_group,
     .shape = "d",
     .classes = kProcess},
    {.name = "wait4",
     .number = SYS_wait4,
     .shape = "dpxp",
     .classes = kProcess,
     .handler = on_wait4},
    {.name = "waitid",
     .number = SYS_waitid,
     .shape = "ddpxp",
     .classes = kProcess,
     .handler = on_waitid},
    {.name = "rt_sigsuspend",
     .number = SYS_rt_sigsuspend,
     .shape = "pu",
     .classes = kSignal,
     .handler = on_sigsuspend},
    {.name = "pause",
     .number = SYS_pause,
     .shape = "",
     .classes = kSignal,
     .handler = on_pause},
    {.name = "setsid",
     .number = SYS_setsid,
     .shape = "",
     .classes = kProcess,
     .handler = on_leave_group},
    {.name = "setpgid",
     .number = SYS_setpgid,
     .shape = "dd",
     .classes = kProcess,
     .handler = on_leave_group},
    {.name = "kill",
     .number = SYS_kill,
     .shape = "d{signal}",
     .classes = kSignal},
    {.name = "execve",
     .number = SYS_execve,
     .shape = "spp",
     .classes = kFile | kProcess},
    {.name = "set_tid_address", .number = SYS_set_tid_address, .shape = "p"},
    {.name = "set_robust_list", .number = SYS_set_robust_list, .shape = "pu"},
    {.name = "rseq",
     .number = SYS_rseq,
     .shape = "puxx",
     .handler = refuse_enosys,
     .source = executor::Source::kRseq},
    {.name = "io_uring_setup",
     .number = SYS_io_uring_setup,
     .handler = refuse_enosys,
     .source = executor::Source::kIoUring},
    // Stopped only for ARCH_GET_CPUID (0x1011) and ARCH_SET_CPUID
    // (0x1012): no other arch_prctl code has bit 0x10.
    {.name = "arch_prctl",
     .number = SYS_arch_prctl,
     .shape = "{arch_prctl}p",
     .handler = answer_arch_cpuid,
     .trap_if = {0, 0x10}},
    {.name = "prctl", .number = SYS_prctl, .shape = "{prctl}xxxx"},
    {.name = "personality",
     .number = SYS_personality,
     .shape = "x",
     .handler = unrestorable},
});
// The rows of the calls that are not in the table, under observing_program,
// and of the calls of a foreign ABI (int 0x80 from x86-64, x32).
constexpr Syscall kOther{
    .name = "(any other)", .number = -1, .handler = pass_through};
constexpr Syscall kForeign{
    .name = "(foreign ABI)", .number = -1, .handler = on_foreign_abi};
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
