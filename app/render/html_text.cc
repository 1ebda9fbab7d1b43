#include "app/render/html_text.h"

#include "app/report/json_bytes.h"
#include "util/escape.h"

namespace cmc::app {

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text)
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    case '\'':
      escaped += "&#39;";
      break;
    default:
      escaped += c;
    }
  return escaped;
}

std::string html_of(const nlohmann::json &value) {
  if (value.is_null())
    return "none";
  if (auto bytes = bytes_of_json(value))
    return html_escape(encode_escapes(*bytes));
  return html_escape(
      value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string printable(std::string_view text) {
  std::string shown;
  for (const char c : text)
    shown += c >= ' ' && c <= '~' ? std::string(1, c)
                                  : encode_escapes(std::string_view(&c, 1));
  return shown;
}

std::string html_of_text(const nlohmann::json &value) {
  auto bytes = bytes_of_json(value);
  return bytes ? html_escape(printable(*bytes)) : html_of(value);
}

} // namespace cmc::app
