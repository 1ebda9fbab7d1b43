#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cmc::decoder {

// Reads up to length bytes of the target at address; fewer (or none) where
// its memory is not readable.
using MemoryReader =
    std::function<std::string(std::uint64_t address, std::size_t length)>;

// One system call as strace shows it: "write(4, \"OK\\n\", 3) = 3". The
// arguments of the calls a server makes are decoded (descriptors, lengths,
// flags in hex, paths, the bytes of the buffers read or written, up to 32
// of them); any other call shows its six registers in hex. result is
// nothing for a call that has not returned (" = ?"). Errors are shown as
// "-1 ENOENT".
[[nodiscard]] std::string
format_syscall(long number, const std::array<std::uint64_t, 6> &args,
               std::optional<long> result, const MemoryReader &read);

} // namespace cmc::decoder
