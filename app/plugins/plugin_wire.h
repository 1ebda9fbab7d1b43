#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmc/property.h"
#include "util/result.h"

namespace cmc::app {

// What cmc and its plugin host (app/plugins/plugin_server.h) say to each other
// on their socket. Both ends are the same binary, so numbers go in the
// machine's own byte order.
//
// cmc -> host: a request, u64 size then that many bytes: a whole cmc_path.
// host -> cmc: a reply (kReplyMagic, u8 status, u32 size, the text): after
// the host starts, kLoaded with the property's name or kRefused with why
// the plugin cannot be loaded; after each request, kHolds or kViolated with
// the violation text.

// Longest violation text a plugin may write, NUL included.
inline constexpr std::size_t kViolationSize = 1024;

enum class ReplyStatus : std::uint8_t {
  kLoaded = 0,
  kRefused = 1,
  kHolds = 2,
  kViolated = 3,
};

struct Reply {
  ReplyStatus status = ReplyStatus::kHolds;
  std::string text;
};

inline constexpr std::uint32_t kReplyMagic = 0x50434d43; // "CMCP"
// magic, status, size.
inline constexpr std::size_t kReplyHeaderSize = 4 + 1 + 4;

// The request for path: its frame, size included.
[[nodiscard]] std::string encode_path(const cmc_path &path);

// The reply's frame.
[[nodiscard]] std::string encode_reply(const Reply &reply);
// The reply whose header is header (kReplyHeaderSize bytes): its status
// and the size of the text that follows, or an error when these bytes are
// no reply's header.
[[nodiscard]] Result<std::pair<ReplyStatus, std::uint32_t>>
decode_reply_header(std::string_view header);

// Reads exactly size bytes from a socket; false at its end or on an error,
// and, given writer (a pidfd of the process that writes), once that process
// has exited with nothing more in the socket.
[[nodiscard]] bool read_exact(int socket, char *out, std::size_t size,
                              int writer = -1);
// Writes all of bytes to a socket (no SIGPIPE); false on an error.
[[nodiscard]] bool write_all(int socket, std::string_view bytes);

// A cmc_path rebuilt from a request's payload (the bytes after its size);
// it points into the payload, which must outlive it. Checked for sizes
// only: a step's client is the plugin's to trust, as in cmc.
class DecodedPath {
public:
  [[nodiscard]] static Result<DecodedPath> decode(std::string_view payload);
  // Valid while this object and the payload live, and this is not moved.
  [[nodiscard]] cmc_path view() const;

private:
  std::vector<const char *> client_names_;
  std::vector<cmc_region> regions_;
  std::vector<cmc_step> steps_;
  // received_[i * client count + c]: what client c received at step i.
  std::vector<cmc_bytes> received_;
};

} // namespace cmc::app
