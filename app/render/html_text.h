#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cmc::app {

// text with the characters HTML and SVG give a meaning (& < > " ') as
// character references, for element text and quoted attribute values.
[[nodiscard]] std::string html_escape(std::string_view text);

// A value of a report as text for a page, HTML-escaped: bytes (a string
// or {"hex": ...}) C-escaped as encode_escapes writes them, whatever the
// target put in them; numbers and booleans as JSON writes them; null as
// "none".
[[nodiscard]] std::string html_of(const nlohmann::json &value);

// cmc's own text (a violation, an error), whose quoted bytes are
// C-escaped already: only bytes outside printable ASCII (a plugin's or a
// target's, raw) are escaped, as encode_escapes does; a backslash stays.
[[nodiscard]] std::string printable(std::string_view text);
// The same, HTML-escaped, of a report's value (bytes; else as html_of).
[[nodiscard]] std::string html_of_text(const nlohmann::json &value);

} // namespace cmc::app
