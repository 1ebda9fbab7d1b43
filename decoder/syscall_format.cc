#include "decoder/syscall_format.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "decoder/flag_names.h"
#include "decoder/syscall_scan.h"
#include "util/escape.h"

namespace cmc::decoder {
namespace {

// The call being shown, for the arguments that depend on others.
struct Call {
  const std::array<std::uint64_t, 6> &args;
  std::optional<long> result;
  const MemoryReader &read;
  const FormatOptions &options;
};

std::string hex(std::uint64_t value) { return fmt::format("{:#x}", value); }

std::string named(std::string_view kind, std::uint64_t value) {
  const ValueNames *names = value_names(kind);
  return names != nullptr ? name_value(*names, value) : hex(value);
}

std::string quoted(const Call &call, std::uint64_t address,
                   std::uint64_t length) {
  const std::string bytes =
      call.read(address, static_cast<std::size_t>(std::min<std::uint64_t>(
                             length, call.options.string_limit)));
  if (bytes.empty() && length > 0)
    return hex(address);
  return fmt::format("\"{}\"{}", encode_escapes(bytes),
                     length > bytes.size() ? "..." : "");
}

// A path: strace shows file names whole, whatever -s says.
std::string c_string(const Call &call, std::uint64_t address) {
  if (address == 0)
    return "NULL";
  std::string bytes = call.read(address, 4096);
  const auto end = bytes.find('\0');
  if (end == std::string::npos)
    return hex(address);
  bytes.resize(end);
  return fmt::format("\"{}\"", encode_escapes(bytes));
}

std::string octal(std::uint64_t mode) {
  return fmt::format("0{:02o}", mode & 0xffffffffU);
}

template <typename T> T load(const std::string &bytes, std::size_t at) {
  T value{};
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

std::string inet_text(int family, const char *address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  inet_ntop(family, address, text.data(), text.size());
  return text.data();
}

// struct sockaddr as strace shows it: {sa_family=AF_INET,
// sin_port=htons(7000), sin_addr=inet_addr("127.0.0.1")}.
std::string socket_address(const Call &call, std::uint64_t address,
                           std::uint64_t length) {
  if (address == 0)
    return "NULL";
  const std::string bytes =
      call.read(address, std::min<std::uint64_t>(length, 128));
  if (bytes.size() < sizeof(sa_family_t))
    return hex(address);
  const auto family = load<sa_family_t>(bytes, 0);
  std::string text = "{sa_family=" + named("family", family);
  if (family == AF_INET && bytes.size() >= sizeof(sockaddr_in))
    text += fmt::format(", sin_port=htons({}), sin_addr=inet_addr(\"{}\")",
                        ntohs(load<in_port_t>(bytes, 2)),
                        inet_text(AF_INET, bytes.data() + 4));
  else if (family == AF_INET6 && bytes.size() >= sizeof(sockaddr_in6))
    text += fmt::format(
        ", sin6_port=htons({}), sin6_addr=inet_pton(AF_INET6, \"{}\")",
        ntohs(load<in_port_t>(bytes, 2)),
        inet_text(AF_INET6, bytes.data() + offsetof(sockaddr_in6, sin6_addr)));
  else if (family == AF_UNIX)
    text += fmt::format(", sun_path=\"{}\"",
                        encode_escapes(std::string_view(bytes).substr(2).substr(
                            0, bytes.find('\0', 2) - 2)));
  return text + "}";
}

// struct epoll_event (packed on x86-64: 4 bytes of events, 8 of data).
std::string epoll_event_at(const Call &call, std::uint64_t address) {
  if (address == 0)
    return "NULL";
  const std::string bytes = call.read(address, 12);
  if (bytes.size() < 12)
    return hex(address);
  const auto data = load<std::uint64_t>(bytes, 4);
  return fmt::format("{{events={}, data={{u32={}, u64={}}}}}",
                     named("epoll_events", load<std::uint32_t>(bytes, 0)),
                     static_cast<std::uint32_t>(data), data);
}

// struct timespec at of bytes (two 64-bit fields on x86-64).
std::string timespec_text(const std::string &bytes, std::size_t at) {
  return fmt::format("{{tv_sec={}, tv_nsec={}}}", load<std::int64_t>(bytes, at),
                     load<std::int64_t>(bytes, at + 8));
}

// A struct of size bytes at address as show shows its bytes; NULL, or
// the address where it cannot be read.
template <typename Show>
std::string struct_at(const Call &call, std::uint64_t address, std::size_t size,
                      Show show) {
  if (address == 0)
    return "NULL";
  const std::string bytes = call.read(address, size);
  if (bytes.size() < size)
    return hex(address);
  return show(bytes);
}

std::string timespec_at(const Call &call, std::uint64_t address) {
  return struct_at(call, address, 16, [](const std::string &bytes) {
    return timespec_text(bytes, 0);
  });
}

// An array of struct pollfd, its length the next argument: [{fd=3,
// events=POLLIN}, ...], at most -s of them (as strace's arrays).
std::string pollfds_at(const Call &call, std::uint64_t address,
                       std::uint64_t count) {
  const auto shown = static_cast<std::size_t>(
      std::min<std::uint64_t>(count, call.options.string_limit));
  return struct_at(
      call, address, shown * sizeof(pollfd), [&](const std::string &bytes) {
        std::vector<std::string> entries;
        for (std::size_t i = 0; i < shown; ++i) {
          const std::size_t at = i * sizeof(pollfd);
          entries.push_back(fmt::format(
              "{{fd={}, events={}}}",
              load<std::int32_t>(bytes, at + offsetof(pollfd, fd)),
              named("poll_events", load<std::uint16_t>(
                                       bytes, at + offsetof(pollfd, events)))));
        }
        if (count > shown)
          entries.emplace_back("...");
        return fmt::format("[{}]", fmt::join(entries, ", "));
      });
}

using Special = std::optional<std::string> (*)(const Call &call,
                                               std::size_t index);

std::optional<std::string> mode_arg(const Call &call, std::size_t index) {
  return octal(call.args[index]);
}

// open's and openat's mode, which strace shows only with O_CREAT or
// O_TMPFILE in the flags before it.
std::optional<std::string> open_mode_arg(const Call &call, std::size_t index) {
  const std::uint64_t flags = index > 0 ? call.args[index - 1] : 0;
  if ((flags & O_CREAT) == 0 && (flags & O_TMPFILE) != O_TMPFILE)
    return std::nullopt;
  return octal(call.args[index]);
}

std::optional<std::string> fcntl_arg(const Call &call, std::size_t index) {
  const std::uint64_t value = call.args[index];
  switch (static_cast<int>(call.args[1])) {
  case F_GETFD:
  case F_GETFL:
  case F_GETOWN:
  case F_GETSIG:
  case F_GETLEASE:
  case F_GETPIPE_SZ:
  case F_GET_SEALS:
    return std::nullopt;
  case F_SETFL:
    return named("open", value);
  case F_SETFD:
    return named("fd_cloexec", value);
  case F_DUPFD:
  case F_DUPFD_CLOEXEC:
  case F_SETOWN:
  case F_SETSIG:
  case F_SETPIPE_SZ:
    return std::to_string(static_cast<std::int32_t>(value));
  default:
    return hex(value);
  }
}

std::optional<std::string> sockaddr_arg(const Call &call, std::size_t index) {
  return socket_address(call, call.args[index],
                        index + 1 < call.args.size() ? call.args[index + 1]
                                                     : 0);
}

std::optional<std::string> epoll_event_arg(const Call &call,
                                           std::size_t index) {
  return epoll_event_at(call, call.args[index]);
}

std::optional<std::string> timespec_arg(const Call &call, std::size_t index) {
  return timespec_at(call, call.args[index]);
}

// A struct timespec the call fills: shown once the call succeeded.
std::optional<std::string> timespec_out_arg(const Call &call,
                                            std::size_t index) {
  if (!call.result || *call.result != 0)
    return call.args[index] == 0 ? "NULL" : hex(call.args[index]);
  return timespec_at(call, call.args[index]);
}

// struct itimerspec: it_interval, then it_value.
std::optional<std::string> itimerspec_arg(const Call &call, std::size_t index) {
  return struct_at(call, call.args[index], 32, [](const std::string &bytes) {
    return fmt::format("{{it_interval={}, it_value={}}}",
                       timespec_text(bytes, 0), timespec_text(bytes, 16));
  });
}

std::optional<std::string> pollfd_arg(const Call &call, std::size_t index) {
  return pollfds_at(call, call.args[index],
                    index + 1 < call.args.size() ? call.args[index + 1] : 0);
}

std::optional<std::string> protocol_arg(const Call &call, std::size_t index) {
  const auto family = static_cast<std::uint32_t>(call.args[0]);
  if (family == AF_INET || family == AF_INET6)
    return named("ipproto", call.args[index]);
  return std::to_string(static_cast<std::int32_t>(call.args[index]));
}

std::optional<std::string> sockopt_arg(const Call &call, std::size_t index) {
  const auto level = static_cast<std::int32_t>(call.args[index - 1]);
  const std::uint64_t value = call.args[index];
  if (level == SOL_SOCKET)
    return named("so", value);
  if (level == IPPROTO_TCP)
    return named("tcp", value);
  if (level == IPPROTO_IPV6)
    return named("ipv6", value);
  if (level == IPPROTO_IP)
    return named("ip", value);
  return std::to_string(static_cast<std::int32_t>(value));
}

struct SpecialKind {
  std::string_view name;
  Special show;
};

constexpr auto kSpecialKinds = std::to_array<SpecialKind>({
    {"mode", mode_arg},
    {"open_mode", open_mode_arg},
    {"fcntl_arg", fcntl_arg},
    {"sockaddr", sockaddr_arg},
    {"epoll_event", epoll_event_arg},
    {"timespec", timespec_arg},
    {"timespec_out", timespec_out_arg},
    {"itimerspec", itimerspec_arg},
    {"pollfd", pollfd_arg},
    {"protocol", protocol_arg},
    {"sockopt", sockopt_arg},
});

const SpecialKind *special_kind(std::string_view name) {
  const auto *found =
      std::ranges::find(kSpecialKinds, name, &SpecialKind::name);
  return found != kSpecialKinds.end() ? &*found : nullptr;
}

std::string letter_argument(char kind, const Call &call, std::size_t index) {
  const std::uint64_t value = call.args[index];
  switch (kind) {
  case 'd':
    return std::to_string(static_cast<std::int32_t>(value));
  case 'D':
    return std::to_string(static_cast<std::int64_t>(value));
  case 'u':
    return std::to_string(value);
  case 's':
    return c_string(call, value);
  case 'i':
    return quoted(call, value,
                  index + 1 < call.args.size() ? call.args[index + 1] : 0);
  case 'o':
    if (!call.result || *call.result < 0)
      return hex(value);
    return quoted(call, value, static_cast<std::uint64_t>(*call.result));
  case 'p':
    return value == 0 ? "NULL" : hex(value);
  default:
    return hex(value);
  }
}

// The argument at index as its shape's token says; nothing when the call
// does not take it (open's mode without O_CREAT).
std::optional<std::string> argument(std::string_view token, const Call &call,
                                    std::size_t index) {
  if (token.size() == 1)
    return letter_argument(token[0], call, index);
  const std::string_view name = token.substr(1, token.size() - 2);
  if (const SpecialKind *special = special_kind(name))
    return special->show(call, index);
  return named(name, call.args[index]);
}

// Kernel-internal errors a tracer sees at a call's exit (a signal
// interrupted it), which libc has no names for.
constexpr auto kRestartErrors = std::to_array<Named>({
    {512, "ERESTARTSYS"},
    {513, "ERESTARTNOINTR"},
    {514, "ERESTARTNOHAND"},
    {515, "ENOIOCTLCMD"},
    {516, "ERESTART_RESTARTBLOCK"},
});

std::string result_text(std::optional<long> result, char kind) {
  if (!result)
    return "?";
  if (*result < 0 && *result > -4096) {
    const int error = static_cast<int>(-*result);
    if (const char *name = strerrorname_np(error))
      return fmt::format("-1 {} ({})", name, std::strerror(error));
    const auto *restart = std::ranges::find(
        kRestartErrors, static_cast<std::uint64_t>(error), &Named::value);
    if (restart != kRestartErrors.end())
      return fmt::format("? {}", restart->name);
    return fmt::format("-1 E{}", error);
  }
  if (kind == 'p' || kind == 'x')
    return hex(static_cast<std::uint64_t>(*result));
  return std::to_string(*result);
}

// The shape's tokens; the result's ("=p") last when it has one.
std::vector<std::string_view> tokens_of(std::string_view shape) {
  std::vector<std::string_view> tokens;
  for (std::size_t at = 0; at < shape.size();) {
    std::size_t length = 1;
    if (shape[at] == '{') {
      const auto close = shape.find('}', at);
      length =
          close == std::string_view::npos ? shape.size() - at : close - at + 1;
    } else if (shape[at] == '=') {
      length = shape.size() - at;
    }
    tokens.push_back(shape.substr(at, length));
    at += length;
  }
  return tokens;
}

bool known_token(std::string_view token) {
  if (token.size() == 1)
    return std::string_view("dDuxpsio").find(token[0]) !=
           std::string_view::npos;
  if (token.size() < 3 || token.front() != '{' || token.back() != '}')
    return false;
  const std::string_view name = token.substr(1, token.size() - 2);
  return special_kind(name) != nullptr || value_names(name) != nullptr;
}

} // namespace

std::vector<std::string_view> shape_arguments(std::string_view shape) {
  std::vector<std::string_view> tokens = tokens_of(shape);
  if (!tokens.empty() && tokens.back().front() == '=')
    tokens.pop_back();
  return tokens;
}

bool valid_shape(std::string_view shape) {
  const std::vector<std::string_view> tokens = tokens_of(shape);
  const bool has_result = !tokens.empty() && tokens.back().front() == '=';
  if (has_result &&
      !(tokens.back().size() == 2 && known_token(tokens.back().substr(1))))
    return false;
  const std::size_t arguments = tokens.size() - (has_result ? 1 : 0);
  return arguments <= 6 &&
         std::all_of(tokens.begin(),
                     tokens.begin() + static_cast<std::ptrdiff_t>(arguments),
                     known_token);
}

FormattedCall format_call(long number, std::optional<std::string_view> shape,
                          const std::array<std::uint64_t, 6> &args,
                          std::optional<long> result, const MemoryReader &read,
                          const FormatOptions &options) {
  FormattedCall formatted;
  formatted.name = syscall_name(number);
  if (formatted.name.empty())
    formatted.name = fmt::format("syscall_{}", number);
  const Call call{args, result, read, options};
  const std::string_view kinds = shape.value_or("xxxxxx");
  const std::vector<std::string_view> arguments = shape_arguments(kinds);
  const std::vector<std::string_view> tokens = tokens_of(kinds);
  const char result_kind =
      !tokens.empty() && tokens.back().size() == 2 && tokens.back()[0] == '='
          ? tokens.back()[1]
          : 'd';
  for (std::size_t i = 0; i < arguments.size() && i < args.size(); ++i)
    if (auto shown = argument(arguments[i], call, i))
      formatted.args.push_back(std::move(*shown));
  formatted.result = result_text(result, result_kind);
  return formatted;
}

std::string FormattedCall::text() const {
  return fmt::format("{}({}) = {}", name, fmt::join(args, ", "), result);
}

std::string format_syscall(long number, std::optional<std::string_view> shape,
                           const std::array<std::uint64_t, 6> &args,
                           std::optional<long> result, const MemoryReader &read,
                           const FormatOptions &options) {
  return format_call(number, shape, args, result, read, options).text();
}

} // namespace cmc::decoder
