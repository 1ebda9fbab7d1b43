#include "app/report/json_bytes.h"

#include <fmt/format.h>

namespace cmc::app {
namespace {

// The length of the UTF-8 sequence that starts at bytes[0], 0 when it is
// not one.
std::size_t sequence_length(std::string_view bytes) {
  const auto byte = [&](std::size_t i) {
    return static_cast<unsigned char>(bytes[i]);
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80)
    return 1;
  std::size_t length = 0;
  unsigned char low = 0x80; // the range of the second byte (RFC 3629 4)
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    low = lead == 0xe0 ? 0xa0 : low;   // no overlong form
    high = lead == 0xed ? 0x9f : high; // no surrogate
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    low = lead == 0xf0 ? 0x90 : low;   // no overlong form
    high = lead == 0xf4 ? 0x8f : high; // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (bytes.size() < length || byte(1) < low || byte(1) > high)
    return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf)
      return 0;
  return length;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// Replaces every string value in json that is not UTF-8 by its
// json_bytes object.
void encode_strings(nlohmann::json &json) {
  if (json.is_string()) {
    const auto &text = json.get_ref<const std::string &>();
    if (!is_utf8(text))
      json = json_bytes(text);
    return;
  }
  if (json.is_structured())
    for (nlohmann::json &item : json) // an object's values
      encode_strings(item);
}

} // namespace

bool is_utf8(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t length = sequence_length(bytes);
    if (length == 0)
      return false;
    bytes.remove_prefix(length);
  }
  return true;
}

nlohmann::json json_bytes(std::string_view bytes) {
  if (is_utf8(bytes))
    return std::string(bytes);
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char c : bytes)
    hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return {{"hex", hex}};
}

Result<std::string> bytes_of_json(const nlohmann::json &json) {
  if (json.is_string())
    return json.get<std::string>();
  const Error bad{"expected a string or {\"hex\": \"...\"}, two hex digits "
                  "per byte"};
  if (!json.is_object() || json.size() != 1 || !json.contains("hex") ||
      !json["hex"].is_string())
    return bad;
  const auto &hex = json["hex"].get_ref<const std::string &>();
  if (hex.size() % 2 != 0)
    return bad;
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = hex_digit(hex[i]);
    const int low = hex_digit(hex[i + 1]);
    if (high < 0 || low < 0)
      return bad;
    bytes.push_back(static_cast<char>(high * 16 + low));
  }
  return bytes;
}

Result<std::string> dump_json(nlohmann::json json) {
  encode_strings(json);
  try {
    return json.dump(2);
  } catch (const nlohmann::json::type_error &error) {
    return Error{fmt::format("cannot write the JSON: {}", error.what())};
  }
}

} // namespace cmc::app
