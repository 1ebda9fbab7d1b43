#include "app/plugins/plugin_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cmc::app {
namespace {

class Writer {
public:
  template <typename T> void number(T value) {
    out_.append(reinterpret_cast<const char *>(&value), sizeof value);
  }
  void bytes(const void *data, std::size_t size) {
    number<std::uint64_t>(size);
    out_.append(static_cast<const char *>(data), size);
  }
  void bytes(cmc_bytes bytes) { this->bytes(bytes.data, bytes.size); }
  // A C string, its NUL included: the host points at it where it lies.
  void name(const char *text) { bytes(text, std::strlen(text) + 1); }
  std::string &out() { return out_; }

private:
  std::string out_;
};

// Reads what Writer wrote, every size checked against what is left.
class Reader {
public:
  explicit Reader(std::string_view in) : in_(in) {}

  template <typename T> Result<T> number() {
    if (in_.size() < sizeof(T))
      return Error{"the request ends early"};
    T value;
    std::memcpy(&value, in_.data(), sizeof value);
    in_.remove_prefix(sizeof value);
    return value;
  }
  Result<cmc_bytes> bytes() {
    const auto size = number<std::uint64_t>();
    if (!size)
      return size.error();
    if (in_.size() < *size)
      return Error{"the request ends early"};
    const cmc_bytes bytes{reinterpret_cast<const unsigned char *>(in_.data()),
                          *size};
    in_.remove_prefix(*size);
    return bytes;
  }
  Result<const char *> name() {
    const auto text = bytes();
    if (!text)
      return text.error();
    if (text->size == 0 || text->data[text->size - 1] != 0)
      return Error{"a name in the request is not NUL-terminated"};
    return reinterpret_cast<const char *>(text->data);
  }
  // A count of things that take at least min_size bytes each.
  Result<std::size_t> count(std::size_t min_size) {
    auto value = number<std::uint64_t>();
    if (value && *value > in_.size() / min_size)
      return Error{"a count in the request exceeds its size"};
    return value;
  }
  [[nodiscard]] bool done() const { return in_.empty(); }

private:
  std::string_view in_;
};

constexpr std::size_t kSizeBytes = sizeof(std::uint64_t);

} // namespace

std::string encode_path(const cmc_path &path) {
  Writer writer;
  writer.number<std::uint64_t>(0); // the size, filled in below
  writer.number<std::uint64_t>(path.client_count);
  for (std::size_t c = 0; c < path.client_count; ++c)
    writer.name(path.clients[c]);
  writer.number<std::uint64_t>(path.region_count);
  for (std::size_t r = 0; r < path.region_count; ++r) {
    writer.name(path.regions[r].name);
    writer.number<std::uint64_t>(path.regions[r].offset);
    writer.number<std::uint64_t>(path.regions[r].size);
  }
  writer.number<std::uint64_t>(path.step_count);
  for (std::size_t i = 0; i < path.step_count; ++i) {
    const cmc_step &step = path.steps[i];
    writer.number<std::uint32_t>(step.kind);
    writer.number<std::uint64_t>(step.client);
    writer.bytes(step.message);
    writer.bytes(step.response);
    for (std::size_t c = 0; c < path.client_count; ++c)
      writer.bytes(step.received[c]);
    writer.bytes(step.before);
    writer.bytes(step.after);
  }
  std::string &out = writer.out();
  const std::uint64_t size = out.size() - kSizeBytes;
  std::memcpy(out.data(), &size, sizeof size);
  return std::move(out);
}

std::string encode_reply(const Reply &reply) {
  Writer writer;
  writer.number(kReplyMagic);
  writer.number(reply.status);
  writer.number(static_cast<std::uint32_t>(reply.text.size()));
  writer.out() += reply.text;
  return std::move(writer.out());
}

Result<std::pair<ReplyStatus, std::uint32_t>>
decode_reply_header(std::string_view header) {
  Reader reader(header);
  const auto magic = reader.number<std::uint32_t>();
  const auto status = reader.number<std::uint8_t>();
  const auto size = reader.number<std::uint32_t>();
  if (!magic || *magic != kReplyMagic || !status ||
      *status > static_cast<std::uint8_t>(ReplyStatus::kViolated) || !size)
    return Error{"answered garbage"};
  // Names and violations are short: a long one is garbage too.
  if (*size > kViolationSize)
    return Error{fmt::format("answered garbage (a text of {} bytes)", *size)};
  return std::pair{static_cast<ReplyStatus>(*status), *size};
}

bool read_exact(int socket, char *out, std::size_t size, int writer) {
  while (size > 0) {
    std::array<pollfd, 2> ready{{{socket, POLLIN, 0}, {writer, POLLIN, 0}}};
    if (writer >= 0 && poll(ready.data(), ready.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    // Another process may hold the writer's end of the socket: the
    // writer's exit alone is no end of the stream.
    if (writer >= 0 && (ready[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
      return false;
    const ssize_t got = recv(socket, out, size, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    out += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int socket, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent < 0)
      return false;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

Result<DecodedPath> DecodedPath::decode(std::string_view payload) {
  Reader reader(payload);
  DecodedPath path;
  const auto clients = reader.count(kSizeBytes);
  if (!clients)
    return clients.error();
  for (std::size_t c = 0; c < *clients; ++c) {
    const auto name = reader.name();
    if (!name)
      return name.error();
    path.client_names_.push_back(*name);
  }
  const auto regions = reader.count(3 * kSizeBytes);
  if (!regions)
    return regions.error();
  for (std::size_t r = 0; r < *regions; ++r) {
    const auto name = reader.name();
    const auto offset = reader.number<std::uint64_t>();
    const auto size = reader.number<std::uint64_t>();
    if (!name || !offset || !size)
      return Error{"a region of the request ends early"};
    path.regions_.push_back({*name, *offset, *size});
  }
  const auto steps = reader.count(4 + 5 * kSizeBytes);
  if (!steps)
    return steps.error();
  path.steps_.resize(*steps);
  path.received_.resize(*steps * *clients);
  for (std::size_t i = 0; i < *steps; ++i) {
    cmc_step &step = path.steps_[i];
    const auto kind = reader.number<std::uint32_t>();
    const auto client = reader.number<std::uint64_t>();
    const auto message = reader.bytes();
    const auto response = reader.bytes();
    if (!kind || *kind > CMC_STEP_CRASH || !client || !message || !response)
      return Error{fmt::format("step {} of the request is garbage", i)};
    step.kind = static_cast<cmc_step_kind>(*kind);
    step.client = *client;
    step.message = *message;
    step.response = *response;
    step.received = path.received_.data() + i * *clients;
    for (std::size_t c = 0; c < *clients; ++c) {
      const auto received = reader.bytes();
      if (!received)
        return received.error();
      path.received_[i * *clients + c] = *received;
    }
    const auto before = reader.bytes();
    const auto after = reader.bytes();
    if (!before || !after)
      return Error{fmt::format("step {} of the request ends early", i)};
    step.before = *before;
    step.after = *after;
  }
  if (!reader.done())
    return Error{"the request has bytes after its last step"};
  return path;
}

cmc_path DecodedPath::view() const {
  return {client_names_.size(), client_names_.data(), regions_.size(),
          regions_.data(),      steps_.size(),        steps_.data()};
}

} // namespace cmc::app
