#include "decoder/flag_names.h"

#include <asm/prctl.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <ctime>

#include <fmt/format.h>

namespace cmc::decoder {
namespace {

// A constant under its own name, as the kernel's headers spell it.
#define CMC_NAMED(constant)                                                    \
  Named { static_cast<std::uint64_t>(constant), #constant }

// Flags and constants, each table a kind of argument (or a part of one).
// Where the headers define aliases, the name strace prints.

constexpr auto kProt = std::to_array<Named>({
    CMC_NAMED(PROT_READ),
    CMC_NAMED(PROT_WRITE),
    CMC_NAMED(PROT_EXEC),
    CMC_NAMED(PROT_GROWSDOWN),
    CMC_NAMED(PROT_GROWSUP),
});

constexpr auto kMapType = std::to_array<Named>({
    CMC_NAMED(MAP_SHARED),
    CMC_NAMED(MAP_PRIVATE),
    CMC_NAMED(MAP_SHARED_VALIDATE),
});

constexpr auto kMapFlags = std::to_array<Named>({
    CMC_NAMED(MAP_FIXED),
    CMC_NAMED(MAP_ANONYMOUS),
    CMC_NAMED(MAP_32BIT),
    CMC_NAMED(MAP_GROWSDOWN),
    CMC_NAMED(MAP_DENYWRITE),
    CMC_NAMED(MAP_EXECUTABLE),
    CMC_NAMED(MAP_LOCKED),
    CMC_NAMED(MAP_NORESERVE),
    CMC_NAMED(MAP_POPULATE),
    CMC_NAMED(MAP_NONBLOCK),
    CMC_NAMED(MAP_STACK),
    CMC_NAMED(MAP_HUGETLB),
    CMC_NAMED(MAP_SYNC),
    CMC_NAMED(MAP_FIXED_NOREPLACE),
});

constexpr auto kAccessMode = std::to_array<Named>({
    CMC_NAMED(O_RDONLY),
    CMC_NAMED(O_WRONLY),
    CMC_NAMED(O_RDWR),
});

// O_TMPFILE contains O_DIRECTORY, O_SYNC contains O_DSYNC: first.
constexpr auto kOpenFlags = std::to_array<Named>({
    CMC_NAMED(O_CREAT),
    CMC_NAMED(O_EXCL),
    CMC_NAMED(O_NOCTTY),
    CMC_NAMED(O_TRUNC),
    CMC_NAMED(O_APPEND),
    CMC_NAMED(O_NONBLOCK),
    CMC_NAMED(O_SYNC),
    CMC_NAMED(O_DSYNC),
    CMC_NAMED(O_ASYNC),
    CMC_NAMED(O_DIRECT),
    CMC_NAMED(O_LARGEFILE),
    CMC_NAMED(O_TMPFILE),
    CMC_NAMED(O_DIRECTORY),
    CMC_NAMED(O_NOFOLLOW),
    CMC_NAMED(O_NOATIME),
    CMC_NAMED(O_CLOEXEC),
    CMC_NAMED(O_PATH),
});

// The flags of pipe2 and dup3, and what F_SETFD sets.
constexpr auto kDescriptorFlags = std::to_array<Named>({
    CMC_NAMED(O_NONBLOCK),
    CMC_NAMED(O_DIRECT),
    CMC_NAMED(O_CLOEXEC),
});

constexpr auto kAtFdcwd = std::to_array<Named>({
    Named{static_cast<std::uint32_t>(AT_FDCWD), "AT_FDCWD"},
});

constexpr auto kAtFlags = std::to_array<Named>({
    CMC_NAMED(AT_SYMLINK_NOFOLLOW),
    CMC_NAMED(AT_SYMLINK_FOLLOW),
    CMC_NAMED(AT_NO_AUTOMOUNT),
    CMC_NAMED(AT_EMPTY_PATH),
});

constexpr auto kAccessAtFlags = std::to_array<Named>({
    CMC_NAMED(AT_EACCESS),
    CMC_NAMED(AT_SYMLINK_NOFOLLOW),
    CMC_NAMED(AT_EMPTY_PATH),
});

constexpr auto kUnlinkFlags = std::to_array<Named>({
    CMC_NAMED(AT_REMOVEDIR),
});

constexpr auto kAccessBits = std::to_array<Named>({
    CMC_NAMED(R_OK),
    CMC_NAMED(W_OK),
    CMC_NAMED(X_OK),
});

constexpr auto kWhence = std::to_array<Named>({
    CMC_NAMED(SEEK_SET),
    CMC_NAMED(SEEK_CUR),
    CMC_NAMED(SEEK_END),
    CMC_NAMED(SEEK_DATA),
    CMC_NAMED(SEEK_HOLE),
});

constexpr auto kFcntlCommands = std::to_array<Named>({
    CMC_NAMED(F_DUPFD),         CMC_NAMED(F_GETFD),
    CMC_NAMED(F_SETFD),         CMC_NAMED(F_GETFL),
    CMC_NAMED(F_SETFL),         CMC_NAMED(F_GETLK),
    CMC_NAMED(F_SETLK),         CMC_NAMED(F_SETLKW),
    CMC_NAMED(F_SETOWN),        CMC_NAMED(F_GETOWN),
    CMC_NAMED(F_SETSIG),        CMC_NAMED(F_GETSIG),
    CMC_NAMED(F_OFD_GETLK),     CMC_NAMED(F_OFD_SETLK),
    CMC_NAMED(F_OFD_SETLKW),    CMC_NAMED(F_SETLEASE),
    CMC_NAMED(F_GETLEASE),      CMC_NAMED(F_NOTIFY),
    CMC_NAMED(F_DUPFD_CLOEXEC), CMC_NAMED(F_SETPIPE_SZ),
    CMC_NAMED(F_GETPIPE_SZ),    CMC_NAMED(F_ADD_SEALS),
    CMC_NAMED(F_GET_SEALS),
});

constexpr auto kFdFlags = std::to_array<Named>({
    CMC_NAMED(FD_CLOEXEC),
});

constexpr auto kIoctlRequests = std::to_array<Named>({
    CMC_NAMED(TCGETS),
    CMC_NAMED(TCSETS),
    CMC_NAMED(TIOCGWINSZ),
    CMC_NAMED(TIOCSWINSZ),
    CMC_NAMED(TIOCGPGRP),
    CMC_NAMED(FIONREAD),
    CMC_NAMED(FIONBIO),
    CMC_NAMED(FIOCLEX),
    CMC_NAMED(FIONCLEX),
    CMC_NAMED(FIOASYNC),
    CMC_NAMED(SIOCGIFCONF),
    CMC_NAMED(SIOCGIFFLAGS),
});

constexpr auto kFamilies = std::to_array<Named>({
    CMC_NAMED(AF_UNSPEC),
    CMC_NAMED(AF_UNIX),
    CMC_NAMED(AF_INET),
    CMC_NAMED(AF_INET6),
    CMC_NAMED(AF_NETLINK),
    CMC_NAMED(AF_PACKET),
});

constexpr auto kSocketTypes = std::to_array<Named>({
    CMC_NAMED(SOCK_STREAM),
    CMC_NAMED(SOCK_DGRAM),
    CMC_NAMED(SOCK_RAW),
    CMC_NAMED(SOCK_RDM),
    CMC_NAMED(SOCK_SEQPACKET),
    CMC_NAMED(SOCK_DCCP),
    CMC_NAMED(SOCK_PACKET),
});

constexpr auto kSocketFlags = std::to_array<Named>({
    CMC_NAMED(SOCK_NONBLOCK),
    CMC_NAMED(SOCK_CLOEXEC),
});

constexpr auto kIpProtocols = std::to_array<Named>({
    CMC_NAMED(IPPROTO_IP),
    CMC_NAMED(IPPROTO_ICMP),
    CMC_NAMED(IPPROTO_TCP),
    CMC_NAMED(IPPROTO_UDP),
    CMC_NAMED(IPPROTO_IPV6),
    CMC_NAMED(IPPROTO_ICMPV6),
    CMC_NAMED(IPPROTO_SCTP),
    CMC_NAMED(IPPROTO_RAW),
});

constexpr auto kSocketLevels = std::to_array<Named>({
    CMC_NAMED(SOL_SOCKET),
    CMC_NAMED(SOL_IP),
    CMC_NAMED(SOL_TCP),
    CMC_NAMED(SOL_IPV6),
});

constexpr auto kSocketOptions = std::to_array<Named>({
    CMC_NAMED(SO_DEBUG),     CMC_NAMED(SO_REUSEADDR),  CMC_NAMED(SO_TYPE),
    CMC_NAMED(SO_ERROR),     CMC_NAMED(SO_DONTROUTE),  CMC_NAMED(SO_BROADCAST),
    CMC_NAMED(SO_SNDBUF),    CMC_NAMED(SO_RCVBUF),     CMC_NAMED(SO_KEEPALIVE),
    CMC_NAMED(SO_OOBINLINE), CMC_NAMED(SO_PRIORITY),   CMC_NAMED(SO_LINGER),
    CMC_NAMED(SO_REUSEPORT), CMC_NAMED(SO_PASSCRED),   CMC_NAMED(SO_PEERCRED),
    CMC_NAMED(SO_RCVLOWAT),  CMC_NAMED(SO_SNDLOWAT),   CMC_NAMED(SO_RCVTIMEO),
    CMC_NAMED(SO_SNDTIMEO),  CMC_NAMED(SO_ACCEPTCONN), CMC_NAMED(SO_PROTOCOL),
    CMC_NAMED(SO_DOMAIN),    CMC_NAMED(SO_BUSY_POLL),  CMC_NAMED(SO_ZEROCOPY),
});

constexpr auto kTcpOptions = std::to_array<Named>({
    CMC_NAMED(TCP_NODELAY),
    CMC_NAMED(TCP_MAXSEG),
    CMC_NAMED(TCP_CORK),
    CMC_NAMED(TCP_KEEPIDLE),
    CMC_NAMED(TCP_KEEPINTVL),
    CMC_NAMED(TCP_KEEPCNT),
    CMC_NAMED(TCP_SYNCNT),
    CMC_NAMED(TCP_LINGER2),
    CMC_NAMED(TCP_DEFER_ACCEPT),
    CMC_NAMED(TCP_WINDOW_CLAMP),
    CMC_NAMED(TCP_INFO),
    CMC_NAMED(TCP_QUICKACK),
    CMC_NAMED(TCP_CONGESTION),
    CMC_NAMED(TCP_USER_TIMEOUT),
    CMC_NAMED(TCP_FASTOPEN),
    CMC_NAMED(TCP_NOTSENT_LOWAT),
});

constexpr auto kIpOptions = std::to_array<Named>({
    CMC_NAMED(IP_TOS),
    CMC_NAMED(IP_TTL),
    CMC_NAMED(IP_RECVERR),
    CMC_NAMED(IP_FREEBIND),
    CMC_NAMED(IP_TRANSPARENT),
});

constexpr auto kIpv6Options = std::to_array<Named>({
    CMC_NAMED(IPV6_RECVERR),
    CMC_NAMED(IPV6_V6ONLY),
    CMC_NAMED(IPV6_TCLASS),
});

constexpr auto kShutdownHow = std::to_array<Named>({
    CMC_NAMED(SHUT_RD),
    CMC_NAMED(SHUT_WR),
    CMC_NAMED(SHUT_RDWR),
});

constexpr auto kMessageFlags = std::to_array<Named>({
    CMC_NAMED(MSG_OOB),          CMC_NAMED(MSG_PEEK),
    CMC_NAMED(MSG_DONTROUTE),    CMC_NAMED(MSG_CTRUNC),
    CMC_NAMED(MSG_PROXY),        CMC_NAMED(MSG_TRUNC),
    CMC_NAMED(MSG_DONTWAIT),     CMC_NAMED(MSG_EOR),
    CMC_NAMED(MSG_WAITALL),      CMC_NAMED(MSG_FIN),
    CMC_NAMED(MSG_SYN),          CMC_NAMED(MSG_CONFIRM),
    CMC_NAMED(MSG_RST),          CMC_NAMED(MSG_ERRQUEUE),
    CMC_NAMED(MSG_NOSIGNAL),     CMC_NAMED(MSG_MORE),
    CMC_NAMED(MSG_WAITFORONE),   CMC_NAMED(MSG_FASTOPEN),
    CMC_NAMED(MSG_CMSG_CLOEXEC),
});

constexpr auto kEpollOps = std::to_array<Named>({
    CMC_NAMED(EPOLL_CTL_ADD),
    CMC_NAMED(EPOLL_CTL_DEL),
    CMC_NAMED(EPOLL_CTL_MOD),
});

constexpr auto kEpollEvents = std::to_array<Named>({
    CMC_NAMED(EPOLLIN),
    CMC_NAMED(EPOLLPRI),
    CMC_NAMED(EPOLLOUT),
    CMC_NAMED(EPOLLERR),
    CMC_NAMED(EPOLLHUP),
    Named{0x20, "EPOLLNVAL"},
    CMC_NAMED(EPOLLRDNORM),
    CMC_NAMED(EPOLLRDBAND),
    CMC_NAMED(EPOLLWRNORM),
    CMC_NAMED(EPOLLWRBAND),
    CMC_NAMED(EPOLLMSG),
    CMC_NAMED(EPOLLRDHUP),
    CMC_NAMED(EPOLLEXCLUSIVE),
    CMC_NAMED(EPOLLWAKEUP),
    CMC_NAMED(EPOLLONESHOT),
    CMC_NAMED(EPOLLET),
});

constexpr auto kPollEvents = std::to_array<Named>({
    CMC_NAMED(POLLIN),
    CMC_NAMED(POLLPRI),
    CMC_NAMED(POLLOUT),
    CMC_NAMED(POLLERR),
    CMC_NAMED(POLLHUP),
    CMC_NAMED(POLLNVAL),
    CMC_NAMED(POLLRDNORM),
    CMC_NAMED(POLLRDBAND),
    CMC_NAMED(POLLWRNORM),
    CMC_NAMED(POLLWRBAND),
    CMC_NAMED(POLLMSG),
    CMC_NAMED(POLLRDHUP),
});

constexpr auto kEpollCreateFlags = std::to_array<Named>({
    CMC_NAMED(EPOLL_CLOEXEC),
});

constexpr auto kEventfdFlags = std::to_array<Named>({
    CMC_NAMED(EFD_SEMAPHORE),
    CMC_NAMED(EFD_NONBLOCK),
    CMC_NAMED(EFD_CLOEXEC),
});

constexpr auto kTimerfdFlags = std::to_array<Named>({
    CMC_NAMED(TFD_NONBLOCK),
    CMC_NAMED(TFD_CLOEXEC),
});

constexpr auto kTimerfdSetFlags = std::to_array<Named>({
    CMC_NAMED(TFD_TIMER_ABSTIME),
    CMC_NAMED(TFD_TIMER_CANCEL_ON_SET),
});

constexpr auto kTimerAbstime = std::to_array<Named>({
    CMC_NAMED(TIMER_ABSTIME),
});

constexpr auto kClocks = std::to_array<Named>({
    CMC_NAMED(CLOCK_REALTIME),
    CMC_NAMED(CLOCK_MONOTONIC),
    CMC_NAMED(CLOCK_PROCESS_CPUTIME_ID),
    CMC_NAMED(CLOCK_THREAD_CPUTIME_ID),
    CMC_NAMED(CLOCK_MONOTONIC_RAW),
    CMC_NAMED(CLOCK_REALTIME_COARSE),
    CMC_NAMED(CLOCK_MONOTONIC_COARSE),
    CMC_NAMED(CLOCK_BOOTTIME),
    CMC_NAMED(CLOCK_REALTIME_ALARM),
    CMC_NAMED(CLOCK_BOOTTIME_ALARM),
    CMC_NAMED(CLOCK_TAI),
});

constexpr auto kFutexOps = std::to_array<Named>({
    CMC_NAMED(FUTEX_WAIT),
    CMC_NAMED(FUTEX_WAKE),
    CMC_NAMED(FUTEX_FD),
    CMC_NAMED(FUTEX_REQUEUE),
    CMC_NAMED(FUTEX_CMP_REQUEUE),
    CMC_NAMED(FUTEX_WAKE_OP),
    CMC_NAMED(FUTEX_LOCK_PI),
    CMC_NAMED(FUTEX_UNLOCK_PI),
    CMC_NAMED(FUTEX_TRYLOCK_PI),
    CMC_NAMED(FUTEX_WAIT_BITSET),
    CMC_NAMED(FUTEX_WAKE_BITSET),
    CMC_NAMED(FUTEX_WAIT_REQUEUE_PI),
    CMC_NAMED(FUTEX_CMP_REQUEUE_PI),
    CMC_NAMED(FUTEX_LOCK_PI2),
});

constexpr auto kFutexFlags = std::to_array<Named>({
    CMC_NAMED(FUTEX_PRIVATE_FLAG),
    CMC_NAMED(FUTEX_CLOCK_REALTIME),
});

constexpr auto kGetrandomFlags = std::to_array<Named>({
    CMC_NAMED(GRND_NONBLOCK),
    CMC_NAMED(GRND_RANDOM),
    CMC_NAMED(GRND_INSECURE),
});

constexpr auto kMadvise = std::to_array<Named>({
    CMC_NAMED(MADV_NORMAL),      CMC_NAMED(MADV_RANDOM),
    CMC_NAMED(MADV_SEQUENTIAL),  CMC_NAMED(MADV_WILLNEED),
    CMC_NAMED(MADV_DONTNEED),    CMC_NAMED(MADV_FREE),
    CMC_NAMED(MADV_REMOVE),      CMC_NAMED(MADV_DONTFORK),
    CMC_NAMED(MADV_DOFORK),      CMC_NAMED(MADV_MERGEABLE),
    CMC_NAMED(MADV_UNMERGEABLE), CMC_NAMED(MADV_HUGEPAGE),
    CMC_NAMED(MADV_NOHUGEPAGE),  CMC_NAMED(MADV_DONTDUMP),
    CMC_NAMED(MADV_DODUMP),      CMC_NAMED(MADV_WIPEONFORK),
    CMC_NAMED(MADV_KEEPONFORK),  CMC_NAMED(MADV_COLD),
    CMC_NAMED(MADV_PAGEOUT),     CMC_NAMED(MADV_HWPOISON),
});

// Signals by number; SIGRTMIN and above are numbers, as strace's
// SIGRT_n are not worth a table.
constexpr auto kSignals = std::to_array<Named>({
    CMC_NAMED(SIGHUP),    CMC_NAMED(SIGINT),    CMC_NAMED(SIGQUIT),
    CMC_NAMED(SIGILL),    CMC_NAMED(SIGTRAP),   CMC_NAMED(SIGABRT),
    CMC_NAMED(SIGBUS),    CMC_NAMED(SIGFPE),    CMC_NAMED(SIGKILL),
    CMC_NAMED(SIGUSR1),   CMC_NAMED(SIGSEGV),   CMC_NAMED(SIGUSR2),
    CMC_NAMED(SIGPIPE),   CMC_NAMED(SIGALRM),   CMC_NAMED(SIGTERM),
    CMC_NAMED(SIGSTKFLT), CMC_NAMED(SIGCHLD),   CMC_NAMED(SIGCONT),
    CMC_NAMED(SIGSTOP),   CMC_NAMED(SIGTSTP),   CMC_NAMED(SIGTTIN),
    CMC_NAMED(SIGTTOU),   CMC_NAMED(SIGURG),    CMC_NAMED(SIGXCPU),
    CMC_NAMED(SIGXFSZ),   CMC_NAMED(SIGVTALRM), CMC_NAMED(SIGPROF),
    CMC_NAMED(SIGWINCH),  CMC_NAMED(SIGIO),     CMC_NAMED(SIGPWR),
    CMC_NAMED(SIGSYS),
});

constexpr auto kSigprocmaskHow = std::to_array<Named>({
    CMC_NAMED(SIG_BLOCK),
    CMC_NAMED(SIG_UNBLOCK),
    CMC_NAMED(SIG_SETMASK),
});

constexpr auto kResources = std::to_array<Named>({
    CMC_NAMED(RLIMIT_CPU),
    CMC_NAMED(RLIMIT_FSIZE),
    CMC_NAMED(RLIMIT_DATA),
    CMC_NAMED(RLIMIT_STACK),
    CMC_NAMED(RLIMIT_CORE),
    CMC_NAMED(RLIMIT_RSS),
    CMC_NAMED(RLIMIT_NPROC),
    CMC_NAMED(RLIMIT_NOFILE),
    CMC_NAMED(RLIMIT_MEMLOCK),
    CMC_NAMED(RLIMIT_AS),
    CMC_NAMED(RLIMIT_LOCKS),
    CMC_NAMED(RLIMIT_SIGPENDING),
    CMC_NAMED(RLIMIT_MSGQUEUE),
    CMC_NAMED(RLIMIT_NICE),
    CMC_NAMED(RLIMIT_RTPRIO),
    CMC_NAMED(RLIMIT_RTTIME),
});

constexpr auto kArchPrctl = std::to_array<Named>({
    CMC_NAMED(ARCH_SET_GS),
    CMC_NAMED(ARCH_SET_FS),
    CMC_NAMED(ARCH_GET_FS),
    CMC_NAMED(ARCH_GET_GS),
    CMC_NAMED(ARCH_GET_CPUID),
    CMC_NAMED(ARCH_SET_CPUID),
});

constexpr auto kPrctl = std::to_array<Named>({
    CMC_NAMED(PR_SET_PDEATHSIG),
    CMC_NAMED(PR_GET_PDEATHSIG),
    CMC_NAMED(PR_GET_DUMPABLE),
    CMC_NAMED(PR_SET_DUMPABLE),
    CMC_NAMED(PR_SET_NAME),
    CMC_NAMED(PR_GET_NAME),
    CMC_NAMED(PR_GET_SECCOMP),
    CMC_NAMED(PR_SET_SECCOMP),
    CMC_NAMED(PR_CAPBSET_READ),
    CMC_NAMED(PR_CAPBSET_DROP),
    CMC_NAMED(PR_GET_TSC),
    CMC_NAMED(PR_SET_TSC),
    CMC_NAMED(PR_SET_TIMERSLACK),
    CMC_NAMED(PR_GET_TIMERSLACK),
    CMC_NAMED(PR_SET_CHILD_SUBREAPER),
    CMC_NAMED(PR_SET_NO_NEW_PRIVS),
    CMC_NAMED(PR_GET_NO_NEW_PRIVS),
    CMC_NAMED(PR_SET_THP_DISABLE),
    CMC_NAMED(PR_GET_THP_DISABLE),
    CMC_NAMED(PR_SET_VMA),
});

#undef CMC_NAMED

// A kind's fields after the tables it needs are left at their defaults.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
constexpr auto kKinds = std::to_array<ValueNames>({
    {"prot", {}, 0, kProt, "PROT_NONE"},
    {"map", kMapType, MAP_TYPE, kMapFlags},
    {"open", kAccessMode, O_ACCMODE, kOpenFlags},
    {"fdflags", {}, 0, kDescriptorFlags},
    {"atfd", kAtFdcwd, 0, {}, "", true},
    {"at", {}, 0, kAtFlags},
    {"accessat", {}, 0, kAccessAtFlags},
    {"unlinkat", {}, 0, kUnlinkFlags},
    {"access", {}, 0, kAccessBits, "F_OK"},
    {"whence", kWhence, 0, {}, "", true},
    {"fcntl", kFcntlCommands, 0, {}, "", true},
    {"fd_cloexec", {}, 0, kFdFlags},
    {"ioctl", kIoctlRequests},
    {"family", kFamilies, 0, {}, "", true},
    {"socktype", kSocketTypes, 0xf, kSocketFlags},
    {"sockflags", {}, 0, kSocketFlags},
    {"ipproto", kIpProtocols, 0, {}, "", true},
    {"sol", kSocketLevels, 0, {}, "", true},
    {"so", kSocketOptions, 0, {}, "", true},
    {"tcp", kTcpOptions, 0, {}, "", true},
    {"ip", kIpOptions, 0, {}, "", true},
    {"ipv6", kIpv6Options, 0, {}, "", true},
    {"shut", kShutdownHow, 0, {}, "", true},
    {"msg", {}, 0, kMessageFlags},
    {"epoll_op", kEpollOps, 0, {}, "", true},
    {"epoll_events", {}, 0, kEpollEvents},
    {"poll_events", {}, 0, kPollEvents},
    {"epoll_flags", {}, 0, kEpollCreateFlags},
    {"efd", {}, 0, kEventfdFlags},
    {"tfd", {}, 0, kTimerfdFlags},
    {"tfd_settime", {}, 0, kTimerfdSetFlags},
    {"abstime", {}, 0, kTimerAbstime},
    {"clock", kClocks, 0, {}, "", true},
    {"futex", kFutexOps, static_cast<std::uint32_t>(FUTEX_CMD_MASK),
     kFutexFlags},
    {"grnd", {}, 0, kGetrandomFlags},
    {"madv", kMadvise, 0, {}, "", true},
    {"signal", kSignals, 0, {}, "", true},
    {"sighow", kSigprocmaskHow, 0, {}, "", true},
    {"rlimit", kResources, 0, {}, "", true},
    {"arch_prctl", kArchPrctl},
    {"prctl", kPrctl, 0, {}, "", true},
});
#pragma GCC diagnostic pop

std::string_view name_of(std::span<const Named> names, std::uint64_t value) {
  const auto found = std::ranges::find(names, value, &Named::value);
  return found != names.end() ? found->name : std::string_view();
}

} // namespace

std::string name_value(const ValueNames &names, std::uint64_t value) {
  value &= 0xffffffffU;
  std::string text;
  const auto add = [&text](std::string_view part) {
    text += text.empty() ? "" : "|";
    text += part;
  };
  std::uint64_t rest = value;
  if (!names.choices.empty()) {
    const std::uint64_t mask =
        names.choice_mask != 0 ? names.choice_mask : 0xffffffffU;
    const std::string_view choice = name_of(names.choices, value & mask);
    if (!choice.empty()) {
      add(choice);
      rest &= ~mask;
    }
  }
  for (const Named &flag : names.flags)
    if (flag.value != 0 && (rest & flag.value) == flag.value) {
      add(flag.name);
      rest &= ~flag.value;
    }
  if (rest != 0 || text.empty()) {
    if (rest == 0 && !names.zero.empty())
      add(names.zero);
    else if (names.decimal && text.empty())
      add(std::to_string(static_cast<std::int32_t>(rest)));
    else
      add(rest == 0 ? std::string("0") : fmt::format("{:#x}", rest));
  }
  return text;
}

const ValueNames *value_names(std::string_view kind) {
  const auto *found = std::ranges::find(kKinds, kind, &ValueNames::kind);
  return found != kKinds.end() ? &*found : nullptr;
}

} // namespace cmc::decoder
