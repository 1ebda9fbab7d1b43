#include "bench/untraced_server.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

namespace cmc::bench {

UniqueFd connect_when_listening(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A server listens soon after it starts: a retry loop, in a benchmark
  // only, never in a test.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < give_up) {
    UniqueFd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (connect(sock.get(), reinterpret_cast<sockaddr *>(&address),
                sizeof address) == 0)
      return sock;
    std::this_thread::yield();
  }
  return UniqueFd();
}

} // namespace cmc::bench
