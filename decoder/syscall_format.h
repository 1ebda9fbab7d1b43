#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cmc::decoder {

// Reads up to length bytes of the target at address; fewer (or none) where
// its memory is not readable.
using MemoryReader =
    std::function<std::string(std::uint64_t address, std::size_t length)>;

// How much of the target's memory a call shows.
struct FormatOptions {
  std::size_t string_limit = 32; // bytes of a buffer or string (strace -s)
};

// One system call as strace shows it: "write(4, \"OK\\n\", 3) = 3". shape
// says how each argument is shown, in order, a letter or a {kind} each
// (the table of calls, tracer/syscalls/syscall_table.cc, keeps every call's):
//   d int (32 bits)     D long                u unsigned decimal
//   x hex (flags, modes)
//   p pointer           s NUL-terminated string (a path)
//   i a buffer the call reads, its length the next argument
//   o a buffer the call fills, its length the result
//   {mode}       a file mode in octal
//   {open_mode}  the same, shown only when the flags before it create
//   {fcntl_arg}  fcntl's third argument, as its command says (or none)
//   {sockaddr}   a socket address the call reads, its length next
//   {epoll_event} a struct epoll_event the call reads
//   {timespec}   a struct timespec the call reads: {tv_sec=1, tv_nsec=0}
//   {timespec_out} one the call fills, shown once it succeeded
//   {itimerspec} a struct itimerspec the call reads: {it_interval={...},
//                it_value={...}}
//   {pollfd}     an array of struct pollfd the call reads, its length
//                next: [{fd=3, events=POLLIN}], at most string_limit
//   {protocol}   socket()'s protocol, named for AF_INET and AF_INET6
//   {sockopt}    a socket option, named for the level before it
//   {NAME}       a flag set or constant of decoder/flag_names.h
//                ({prot}: PROT_READ|PROT_WRITE)
// "=" and a letter at the end say how the result shows (=p: in hex, as
// mmap's); else in decimal. A buffer or string shows up to
// options.string_limit bytes. With no shape, the call shows its six
// registers in hex. result is nothing for a call that has not returned
// (" = ?"). Errors are shown as strace does: "-1 ENOENT (No such file or
// directory)".
[[nodiscard]] std::string
format_syscall(long number, std::optional<std::string_view> shape,
               const std::array<std::uint64_t, 6> &args,
               std::optional<long> result, const MemoryReader &read,
               const FormatOptions &options = {});

// The same in parts, for JSON: "write", {"4", "\"OK\\n\"", "3"}, "3".
struct FormattedCall {
  std::string name;
  std::vector<std::string> args; // as shown: an argument not taken omitted
  std::string result;            // "?" for a call that has not returned

  [[nodiscard]] std::string text() const;
};
[[nodiscard]] FormattedCall
format_call(long number, std::optional<std::string_view> shape,
            const std::array<std::uint64_t, 6> &args,
            std::optional<long> result, const MemoryReader &read,
            const FormatOptions &options = {});

// Whether every argument of shape is a letter or {kind} that
// format_syscall knows, with an optional "=" result letter.
[[nodiscard]] bool valid_shape(std::string_view shape);

// The shape's arguments: "p", "{prot}"..., the result's ("=p") not among
// them.
[[nodiscard]] std::vector<std::string_view>
shape_arguments(std::string_view shape);

} // namespace cmc::decoder
