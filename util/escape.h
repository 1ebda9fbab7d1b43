#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace cmc {

// Decodes the C escapes \n \r \t \0 \\ \" \' and \xHH of a -m argument.
[[nodiscard]] Result<std::string> decode_escapes(std::string_view text);

// The inverse, for printing bytes back as a -m argument would take them:
// printable ASCII as is, everything else escaped.
[[nodiscard]] std::string encode_escapes(std::string_view bytes);

// The last line of a program's output that is not blank, escaped as
// encode_escapes does, cut to at most max_bytes.
[[nodiscard]] std::string last_line(std::string_view output,
                                    std::size_t max_bytes = 160);

} // namespace cmc
