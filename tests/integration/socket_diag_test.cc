// tcp_end asks the kernel, not the peer: an end is closed from its owner's
// close() on, whether its FIN or reset has arrived yet or not, and has
// received what has reached it, read or not.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <optional>

#include "tracer/net/socket_diag.h"
#include "tracer/sandbox/network_namespace.h"

namespace cmc::tracer {
namespace {

sockaddr_storage local_address(const UniqueFd &sock) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  getsockname(sock.get(), reinterpret_cast<sockaddr *>(&address), &length);
  return address;
}

// A listening socket and a client connected to it, in a namespace of their
// own (as a target's).
class SocketDiag : public ::testing::Test {
protected:
  void SetUp() override {
    auto made = NetworkNamespace::create();
    ASSERT_TRUE(made) << made.error().message;
    netns_.emplace(std::move(*made));
    auto diag = open_socket_diag(netns_->fd());
    ASSERT_TRUE(diag) << diag.error().message;
    diag_ = std::move(*diag);
    listener_ = open_socket();
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(
        bind(listener_.get(), reinterpret_cast<sockaddr *>(&any), sizeof any),
        0);
    ASSERT_EQ(listen(listener_.get(), 4), 0);
  }

  [[nodiscard]] UniqueFd open_socket() const {
    auto sock = socket_in(netns_->fd(), AF_INET, SOCK_STREAM);
    EXPECT_TRUE(sock) << sock.error().message;
    return sock ? std::move(*sock) : UniqueFd();
  }

  [[nodiscard]] UniqueFd connect_client() const {
    UniqueFd client = open_socket();
    const sockaddr_storage server = local_address(listener_);
    EXPECT_EQ(connect(client.get(), reinterpret_cast<const sockaddr *>(&server),
                      sizeof(sockaddr_in)),
              0);
    return client;
  }

  // The server's end of client's connection.
  [[nodiscard]] TcpEnd server_end(const UniqueFd &client) const {
    sockaddr_storage server{};
    socklen_t length = sizeof server;
    getpeername(client.get(), reinterpret_cast<sockaddr *>(&server), &length);
    auto end = tcp_end(diag_, server, local_address(client));
    EXPECT_TRUE(end) << end.error().message;
    return end ? *end : TcpEnd{};
  }

  [[nodiscard]] bool server_end_closed(const UniqueFd &client) const {
    return server_end(client).closed;
  }

  std::optional<NetworkNamespace> netns_;
  UniqueFd diag_;
  UniqueFd listener_;
};

TEST_F(SocketDiag, AnEndIsOpenInTheQueueAcceptedAndAfterThePeersClose) {
  const UniqueFd client = connect_client();
  EXPECT_FALSE(server_end_closed(client));
  ASSERT_EQ(send(client.get(), "abc", 3, 0), 3);
  EXPECT_EQ(server_end(client).received, 3);
  const UniqueFd server(accept4(listener_.get(), nullptr, nullptr, 0));
  ASSERT_TRUE(server.valid());
  std::array<char, 3> bytes{};
  ASSERT_EQ(read(server.get(), bytes.data(), 2), 2);
  ASSERT_EQ(send(client.get(), "de", 2, 0), 2);
  EXPECT_EQ(server_end(client).received, 5);
  EXPECT_FALSE(server_end_closed(client));
  shutdown(client.get(), SHUT_WR);
  EXPECT_FALSE(server_end_closed(client));
}

TEST_F(SocketDiag, AnEndClosedOrResetIsClosed) {
  const UniqueFd client = connect_client();
  UniqueFd server(accept4(listener_.get(), nullptr, nullptr, 0));
  ASSERT_TRUE(server.valid());
  server.reset();
  EXPECT_TRUE(server_end_closed(client));

  // Closed with bytes unread: a reset, and the end is gone at once.
  const UniqueFd second = connect_client();
  ASSERT_EQ(send(second.get(), "x", 1, 0), 1);
  UniqueFd unread(accept4(listener_.get(), nullptr, nullptr, 0));
  ASSERT_TRUE(unread.valid());
  unread.reset();
  EXPECT_TRUE(server_end_closed(second));
}

TEST_F(SocketDiag, AnEndShutDownForWritingIsClosed) {
  const UniqueFd client = connect_client();
  const UniqueFd server(accept4(listener_.get(), nullptr, nullptr, 0));
  ASSERT_TRUE(server.valid());
  shutdown(server.get(), SHUT_WR);
  EXPECT_TRUE(server_end_closed(client));
}

} // namespace
} // namespace cmc::tracer
