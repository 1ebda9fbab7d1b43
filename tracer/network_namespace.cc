#include "tracer/network_namespace.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/check.h"

namespace cmc::tracer {

int bring_up_loopback() {
  const int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return errno;
  ifreq request{};
  std::memcpy(request.ifr_name, "lo", 3);
  int error = 0;
  if (ioctl(sock, SIOCGIFFLAGS, &request) != 0) {
    error = errno;
  } else {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    if (ioctl(sock, SIOCSIFFLAGS, &request) != 0)
      error = errno;
  }
  close(sock);
  return error;
}

int home_network_namespace() {
  thread_local const UniqueFd home(
      ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  return home.get();
}

Result<NetworkNamespace> NetworkNamespace::create() {
  const int home = home_network_namespace();
  if (home < 0)
    return Error{fmt::format("cannot open cmc's own network namespace: {}",
                             std::strerror(errno))};
  if (unshare(CLONE_NEWNET) != 0)
    return Error{fmt::format("cannot create a network namespace for the "
                             "target (cmc needs root or CAP_SYS_ADMIN): {}",
                             std::strerror(errno))};
  UniqueFd fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  const int open_errno = errno;
  const int loopback_error = bring_up_loopback();
  CMC_CHECK(setns(home, CLONE_NEWNET) == 0, "returning to cmc's netns");
  if (!fd.valid())
    return Error{fmt::format("cannot open the new network namespace: {}",
                             std::strerror(open_errno))};
  if (loopback_error != 0)
    return Error{fmt::format("cannot bring up loopback in the target's "
                             "network namespace: {}",
                             std::strerror(loopback_error))};
  return NetworkNamespace(std::move(fd));
}

} // namespace cmc::tracer
