#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "util/result.h"

namespace cmc::app {

// JSON for any bytes. A JSON string holds Unicode text, but what cmc
// writes may hold a target's or a user's bytes (messages, arguments,
// replies, violation texts): bytes that are valid UTF-8 are a JSON string
// as they are; any other bytes are the object {"hex": "48ff0a"}, two
// lowercase hex digits per byte (README, "JSON report").
[[nodiscard]] nlohmann::json json_bytes(std::string_view bytes);

// The bytes json_bytes wrote: a string, or {"hex": ...}.
[[nodiscard]] Result<std::string> bytes_of_json(const nlohmann::json &json);

// Whether bytes are UTF-8 as RFC 3629 defines it (no overlong forms, no
// surrogates, nothing past U+10FFFF): what a JSON string may hold.
[[nodiscard]] bool is_utf8(std::string_view bytes);

// The text of json, indented by 2, every string value written as
// json_bytes writes it. Fails (never throws) only for an object key that
// is not UTF-8.
[[nodiscard]] Result<std::string> dump_json(nlohmann::json json);

} // namespace cmc::app
