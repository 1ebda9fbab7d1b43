#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cmc::decoder {

// Reads up to length bytes of the target at address; fewer (or none) where
// its memory is not readable.
using MemoryReader =
    std::function<std::string(std::uint64_t address, std::size_t length)>;

// One system call as strace shows it: "write(4, \"OK\\n\", 3) = 3". shape
// says how each argument is shown, one letter each (the table of calls,
// tracer/syscall_table.cc, keeps every call's):
//   d int (32 bits)     D long                u unsigned decimal
//   x hex (flags, modes)
//   p pointer           s NUL-terminated string (a path)
//   i a buffer the call reads, its length the next argument
//   o a buffer the call fills, its length the result
// A buffer shows up to 32 bytes. With no shape, the call shows its six
// registers in hex. result is nothing for a call that has not returned
// (" = ?"). Errors are shown as "-1 ENOENT".
[[nodiscard]] std::string
format_syscall(long number, std::optional<std::string_view> shape,
               const std::array<std::uint64_t, 6> &args,
               std::optional<long> result, const MemoryReader &read);

} // namespace cmc::decoder
