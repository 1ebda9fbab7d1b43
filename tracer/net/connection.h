#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
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
  // run side by side on the same port. cmc's end is bound to local_port
  // (nth_client_port): the target sees the same peer address in every run,
  // where an ephemeral port would differ in the state it keeps.
  [[nodiscard]] static Result<Connection>
  open(int netns, const sockaddr_storage &address, std::uint16_t local_port);
  Connection(Connection &&) noexcept = default;
  Connection &operator=(Connection &&) noexcept = default;
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;
  ~Connection();

  // Sends all of bytes and returns once they have reached the target's
  // end (or it has closed it), at most until end.
  [[nodiscard]] Result<void> send(std::string_view bytes,
                                  std::chrono::steady_clock::time_point end);
  // Whether the target has closed its end (or reset it), whether its FIN
  // or reset has reached cmc's end yet or not.
  [[nodiscard]] Result<bool> target_closed() const;
  // The bytes sent that the target has not read (yet): they wait in its
  // end's receive queue, accepted or not, and decide what its next read
  // gets; "" once it has closed its end. Asks the kernel how many
  // (sock_diag); unread(waiting) when the caller knows.
  [[nodiscard]] Result<std::string> unread();
  // The last waiting bytes sent, when waiting are queued unread at the
  // target's end (SIOCINQ of its end); the ones before, read, are
  // forgotten.
  [[nodiscard]] std::string unread(std::size_t waiting);
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
  Connection(UniqueFd socket, UniqueFd diag, const sockaddr_storage &local,
             const sockaddr_storage &remote)
      : socket_(std::move(socket)), diag_(std::move(diag)), local_(local),
        remote_(remote) {}
  UniqueFd socket_;
  UniqueFd diag_; // sock_diag of the target's namespace (socket_diag.h)
  sockaddr_storage local_{};
  sockaddr_storage remote_{}; // the target's end
  std::uint64_t sent_ = 0;    // bytes sent on the connection
  // The bytes sent and not known to be read: those unread() last named
  // and the ones sent since.
  std::string unread_;
  std::string received_;
  bool reset_ = false;
};

// The local port of the nth connection (from 0) cmc opens in one run:
// above Linux's default ephemeral range (32768-60999), so no socket the
// target opens itself has it; nothing when n is too large for a port.
[[nodiscard]] std::optional<std::uint16_t> nth_client_port(std::size_t n);

// "127.0.0.1:7000", "[::1]:7000".
[[nodiscard]] std::string describe_address(const sockaddr_storage &address);

} // namespace cmc::tracer
