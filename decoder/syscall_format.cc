#include "decoder/syscall_format.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "decoder/syscall_scan.h"
#include "util/escape.h"

namespace cmc::decoder {
namespace {

constexpr std::size_t kShownBytes = 32;

std::string quoted(const MemoryReader &read, std::uint64_t address,
                   std::uint64_t length) {
  const std::string bytes =
      read(address, static_cast<std::size_t>(std::min(length, kShownBytes)));
  if (bytes.empty() && length > 0)
    return fmt::format("{:#x}", address);
  return fmt::format("\"{}\"{}", encode_escapes(bytes),
                     length > bytes.size() ? "..." : "");
}

std::string c_string(const MemoryReader &read, std::uint64_t address) {
  if (address == 0)
    return "NULL";
  std::string bytes = read(address, 256);
  const auto end = bytes.find('\0');
  if (end == std::string::npos)
    return fmt::format("{:#x}", address);
  bytes.resize(end);
  return fmt::format("\"{}\"", encode_escapes(bytes));
}

std::string argument(char kind, std::size_t index,
                     const std::array<std::uint64_t, 6> &args,
                     std::optional<long> result, const MemoryReader &read) {
  const std::uint64_t value = args[index];
  switch (kind) {
  case 'd':
    return std::to_string(static_cast<std::int32_t>(value));
  case 'D':
    return std::to_string(static_cast<std::int64_t>(value));
  case 'u':
    return std::to_string(value);
  case 's':
    return c_string(read, value);
  case 'i':
    return quoted(read, value, index + 1 < args.size() ? args[index + 1] : 0);
  case 'o':
    if (!result || *result < 0)
      return fmt::format("{:#x}", value);
    return quoted(read, value, static_cast<std::uint64_t>(*result));
  case 'p':
    return value == 0 ? "NULL" : fmt::format("{:#x}", value);
  default:
    return fmt::format("{:#x}", value);
  }
}

std::string result_text(std::optional<long> result) {
  if (!result)
    return "?";
  if (*result < 0 && *result > -4096) {
    const char *name = strerrorname_np(static_cast<int>(-*result));
    return fmt::format("-1 {}", name != nullptr ? name : "E?");
  }
  return std::to_string(*result);
}

} // namespace

std::string format_syscall(long number, std::optional<std::string_view> shape,
                           const std::array<std::uint64_t, 6> &args,
                           std::optional<long> result,
                           const MemoryReader &read) {
  std::string name = syscall_name(number);
  if (name.empty())
    name = fmt::format("syscall_{}", number);
  const std::string_view kinds = shape.value_or("xxxxxx");
  std::string text = name + "(";
  for (std::size_t i = 0; i < kinds.size(); ++i)
    text += (i > 0 ? ", " : "") + argument(kinds[i], i, args, result, read);
  return text + ") = " + result_text(result);
}

} // namespace cmc::decoder
