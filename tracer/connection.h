#pragma once

#include <sys/socket.h>

#include <chrono>
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
  // Moves what has arrived from the target to the received bytes, without
  // waiting; false once the target has closed its end (an end of file or
  // a reset came).
  bool receive();
  // Sends now the acknowledgement the kernel would delay by up to 40 ms:
  // a target whose small write waits for it (Nagle's algorithm) sends it.
  void acknowledge();
  // Waits until more arrives from the target, at most timeout.
  void wait(std::chrono::milliseconds timeout) const;
  // The received bytes, taken (after a receive()).
  [[nodiscard]] std::string drain();
  // The target reset the connection: it closed it with bytes unread.
  [[nodiscard]] bool reset() const { return reset_; }
  // cmc's end, which is the peer address of the target's end.
  [[nodiscard]] const sockaddr_storage &local() const { return local_; }
  // Sends a FIN (the target reads end of file) and sends nothing more;
  // the socket itself stays open until the Connection dies, when it is
  // reset (so no TIME_WAIT socket keeps the target's port).
  void close();

private:
  Connection(UniqueFd socket, const sockaddr_storage &local)
      : socket_(std::move(socket)), local_(local) {}
  UniqueFd socket_;
  sockaddr_storage local_{};
  std::string received_;
  bool reset_ = false;
};

// "127.0.0.1:7000", "[::1]:7000".
[[nodiscard]] std::string describe_address(const sockaddr_storage &address);

} // namespace cmc::tracer
