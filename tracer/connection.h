#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>

#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// cmc's client end of one TCP connection to the target.
class Connection {
public:
  // Connects to address from inside the network namespace netns (an fd of
  // /proc/PID/ns/net): every target has a namespace of its own, so targets
  // run side by side on the same port.
  [[nodiscard]] static Result<Connection> open(int netns,
                                               const sockaddr_storage &address);
  Connection(Connection &&) noexcept = default;
  Connection &operator=(Connection &&) noexcept = default;
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;
  ~Connection();

  // Sends all of bytes and returns once the kernel has handed them to the
  // target's socket.
  [[nodiscard]] Result<void> send(std::string_view bytes);
  // Everything the target has sent back so far, without waiting.
  [[nodiscard]] std::string drain();
  // Sends a FIN (the target reads end of file) and sends nothing more;
  // the socket itself stays open until the Connection dies, when it is
  // reset (so no TIME_WAIT socket keeps the target's port).
  void close();

private:
  explicit Connection(UniqueFd socket) : socket_(std::move(socket)) {}
  UniqueFd socket_;
};

// "127.0.0.1:7000", "[::1]:7000".
[[nodiscard]] std::string describe_address(const sockaddr_storage &address);

} // namespace cmc::tracer
