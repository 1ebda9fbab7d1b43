#include "util/escape.h"

#include <charconv>

#include <fmt/format.h>

namespace cmc {

Result<std::string> decode_escapes(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    if (++i == text.size())
      return Error{fmt::format("'{}' ends with a lone backslash", text)};
    switch (text[i]) {
    case 'n':
      out.push_back('\n');
      break;
    case 'r':
      out.push_back('\r');
      break;
    case 't':
      out.push_back('\t');
      break;
    case '0':
      out.push_back('\0');
      break;
    case '\\':
      out.push_back('\\');
      break;
    case '"':
      out.push_back('"');
      break;
    case '\'':
      out.push_back('\'');
      break;
    case 'x': {
      unsigned value = 0;
      const char *begin = text.data() + i + 1;
      const char *end = text.data() + std::min(text.size(), i + 3);
      const auto [ptr, ec] = std::from_chars(begin, end, value, 16);
      if (ec != std::errc() || ptr != end || end - begin != 2)
        return Error{fmt::format("'{}': \\x needs two hex digits", text)};
      out.push_back(static_cast<char>(value));
      i += 2;
      break;
    }
    default:
      return Error{fmt::format("'{}': unknown escape \\{}", text, text[i])};
    }
  }
  return out;
}

std::string encode_escapes(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    switch (c) {
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\\':
      out += "\\\\";
      break;
    default:
      if (c >= 0x20 && c < 0x7f)
        out.push_back(c);
      else
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::string last_line(std::string_view output, std::size_t max_bytes) {
  const auto blank = [](char c) { return c == '\n' || c == '\r' || c == ' '; };
  while (!output.empty() && blank(output.back()))
    output.remove_suffix(1);
  const std::size_t newline = output.rfind('\n');
  if (newline != std::string_view::npos)
    output.remove_prefix(newline + 1);
  std::string line = encode_escapes(output);
  if (line.size() > max_bytes)
    line = line.substr(0, max_bytes) + "...";
  return line;
}

} // namespace cmc
