#include "decoder/syscall_format.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "decoder/syscall_scan.h"
#include "util/escape.h"

namespace cmc::decoder {
namespace {

// How each argument is shown, one letter each:
//   d int (32 bits)     D long                u unsigned decimal
//   x hex (flags, modes)
//   p pointer           s NUL-terminated string (a path)
//   i a buffer the call reads, its length the next argument
//   o a buffer the call fills, its length the result
struct Shape {
  std::string_view name;
  std::string_view args;
};

constexpr std::array kShapes{
    Shape{"read", "dou"},
    Shape{"write", "diu"},
    Shape{"pread64", "doud"},
    Shape{"pwrite64", "diud"},
    Shape{"readv", "dpd"},
    Shape{"writev", "dpd"},
    Shape{"open", "sxx"},
    Shape{"openat", "dsxx"},
    Shape{"close", "d"},
    Shape{"newfstatat", "dspx"},
    Shape{"fstat", "dp"},
    Shape{"lseek", "dDd"},
    Shape{"access", "sx"},
    Shape{"faccessat2", "dsxx"},
    Shape{"unlink", "s"},
    Shape{"unlinkat", "dsx"},
    Shape{"rename", "ss"},
    Shape{"mkdir", "sx"},
    Shape{"chdir", "s"},
    Shape{"readlink", "sou"},
    Shape{"socket", "dxd"},
    Shape{"bind", "dpu"},
    Shape{"listen", "dd"},
    Shape{"accept", "dpp"},
    Shape{"accept4", "dppx"},
    Shape{"connect", "dpu"},
    Shape{"shutdown", "dd"},
    Shape{"sendto", "diuxpu"},
    Shape{"recvfrom", "douxpp"},
    Shape{"sendmsg", "dpx"},
    Shape{"recvmsg", "dpx"},
    Shape{"setsockopt", "dddpu"},
    Shape{"getsockopt", "dddpp"},
    Shape{"getsockname", "dpp"},
    Shape{"getpeername", "dpp"},
    Shape{"poll", "pud"},
    Shape{"ppoll", "pupp"},
    Shape{"select", "dpppp"},
    Shape{"pselect6", "dppppp"},
    Shape{"epoll_create1", "x"},
    Shape{"epoll_ctl", "dddp"},
    Shape{"epoll_wait", "dpdd"},
    Shape{"epoll_pwait", "dpddp"},
    Shape{"eventfd2", "ux"},
    Shape{"pipe2", "px"},
    Shape{"dup", "d"},
    Shape{"dup2", "dd"},
    Shape{"dup3", "ddx"},
    Shape{"fcntl", "ddx"},
    Shape{"ioctl", "dxp"},
    Shape{"mmap", "puxxdx"},
    Shape{"munmap", "pu"},
    Shape{"mprotect", "pux"},
    Shape{"brk", "p"},
    Shape{"madvise", "pud"},
    Shape{"nanosleep", "pp"},
    Shape{"clock_nanosleep", "dxpp"},
    Shape{"clock_gettime", "dp"},
    Shape{"gettimeofday", "pp"},
    Shape{"time", "p"},
    Shape{"getrandom", "oux"},
    Shape{"futex", "pxdppd"},
    Shape{"timerfd_create", "dx"},
    Shape{"timerfd_settime", "dxpp"},
    Shape{"rt_sigaction", "dppu"},
    Shape{"rt_sigprocmask", "dppu"},
    Shape{"getpid", ""},
    Shape{"gettid", ""},
    Shape{"getuid", ""},
    Shape{"geteuid", ""},
    Shape{"uname", "p"},
    Shape{"prlimit64", "ddpp"},
    Shape{"exit", "d"},
    Shape{"exit_group", "d"},
    Shape{"kill", "dd"},
    Shape{"execve", "spp"},
    Shape{"set_tid_address", "p"},
    Shape{"set_robust_list", "pu"},
    Shape{"rseq", "puxx"},
    Shape{"arch_prctl", "xp"},
    Shape{"prctl", "dxxxx"},
    Shape{"sysinfo", "p"},
};

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

std::string format_syscall(long number,
                           const std::array<std::uint64_t, 6> &args,
                           std::optional<long> result,
                           const MemoryReader &read) {
  std::string name = syscall_name(number);
  if (name.empty())
    name = fmt::format("syscall_{}", number);
  const auto *const shape =
      std::find_if(kShapes.begin(), kShapes.end(),
                   [&](const Shape &known) { return known.name == name; });
  const std::string_view kinds =
      shape != kShapes.end() ? shape->args : std::string_view("xxxxxx");
  std::string text = name + "(";
  for (std::size_t i = 0; i < kinds.size(); ++i)
    text += (i > 0 ? ", " : "") + argument(kinds[i], i, args, result, read);
  return text + ") = " + result_text(result);
}

} // namespace cmc::decoder
