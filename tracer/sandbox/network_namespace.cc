#include "tracer/sandbox/network_namespace.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "util/check.h"

namespace cmc::tracer {

int bring_up_loopback() {
  const auto sock = static_cast<int>(
      syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (sock < 0)
    return errno;
  ifreq request{};
  std::memcpy(request.ifr_name, "lo", 3);
  int error = 0;
  if (syscall(SYS_ioctl, sock, SIOCGIFFLAGS, &request) != 0) {
    error = errno;
  } else {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    if (syscall(SYS_ioctl, sock, SIOCSIFFLAGS, &request) != 0)
      error = errno;
  }
  syscall(SYS_close, sock);
  return error;
}

// A connection closed in order leaves a TIME_WAIT socket for a minute,
// which keeps its port: the next run of this worker could not give its
// client end the same port (nth_client_port), and a target that binds
// without SO_REUSEADDR could not listen again. With no TIME_WAIT buckets
// the kernel closes such connections at once (per network namespace).
int disable_time_wait() {
  UniqueFd file(
      ::open("/proc/sys/net/ipv4/tcp_max_tw_buckets", O_WRONLY | O_CLOEXEC));
  if (!file.valid() || write(file.get(), "0\n", 2) != 2)
    return errno;
  return 0;
}

// For the tests only (CMC_TEST_SLOW_LOOPBACK set): a token bucket on the
// namespace's loopback (tc, of iproute2) holds packets back and sends them
// from a timer's softirq, as a loaded kernel's ksoftirqd would: what cmc
// sends and what the target closes arrive late.
bool slow_down_loopback() {
  if (std::getenv("CMC_TEST_SLOW_LOOPBACK") == nullptr)
    return true;
  return std::system("ip link set lo mtu 1500 && tc qdisc add dev lo root "
                     "tbf rate 100kbit burst 1540 latency 500ms") == 0;
}

int home_network_namespace() {
  thread_local const UniqueFd home(
      ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  return home.get();
}

Result<UniqueFd> socket_in(int netns, int domain, int type, int protocol) {
  // setns changes only the calling thread's namespace.
  const int home = home_network_namespace();
  if (home < 0)
    return system_error("cannot open cmc's own network namespace", errno);
  if (setns(netns, CLONE_NEWNET) != 0)
    return system_error("cannot enter the target's network namespace", errno);
  UniqueFd sock(socket(domain, type | SOCK_CLOEXEC, protocol));
  const int socket_errno = errno;
  CMC_CHECK(setns(home, CLONE_NEWNET) == 0, "returning to cmc's netns");
  if (!sock.valid())
    return system_error("socket", socket_errno);
  return sock;
}

Result<NetworkNamespace> NetworkNamespace::create() {
  const int home = home_network_namespace();
  if (home < 0)
    return system_error("cannot open cmc's own network namespace", errno);
  if (unshare(CLONE_NEWNET) != 0)
    return system_error("cannot create a network namespace for the target (cmc "
                        "needs root or CAP_SYS_ADMIN)",
                        errno);
  UniqueFd fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  const int open_errno = errno;
  int loopback_error = bring_up_loopback();
  if (loopback_error == 0)
    loopback_error = disable_time_wait();
  const bool slowed = loopback_error != 0 || slow_down_loopback();
  CMC_CHECK(setns(home, CLONE_NEWNET) == 0, "returning to cmc's netns");
  if (!fd.valid())
    return system_error("cannot open the new network namespace", open_errno);
  if (loopback_error != 0)
    return system_error(
        "cannot set up loopback in the target's network namespace",
        loopback_error);
  if (!slowed)
    return Error{"CMC_TEST_SLOW_LOOPBACK: tc could not put a token bucket "
                 "on the target's loopback (iproute2 and the kernel's tbf "
                 "are needed)"};
  return NetworkNamespace(std::move(fd));
}

} // namespace cmc::tracer
