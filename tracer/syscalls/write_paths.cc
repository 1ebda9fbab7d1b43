#include "tracer/syscalls/write_paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "tracer/process/process_access.h"
#include "tracer/sandbox/run_files.h"

namespace cmc::tracer {
namespace fs = std::filesystem;
namespace {

// A NUL-terminated string of the target's, read a page at most at a time
// (the string may end just before an unmapped page).
Result<std::string> read_path(const ProcessAccess &tracee,
                              std::uint64_t address) {
  constexpr std::uint64_t kPage = 4096;
  std::string path;
  while (path.size() < PATH_MAX) {
    const std::uint64_t chunk = kPage - address % kPage;
    std::string bytes(chunk, '\0');
    const iovec remote{reinterpret_cast<void *>(address), chunk};
    if (auto done = tracee.read(std::span(&remote, 1),
                                std::as_writable_bytes(std::span(bytes)));
        !done)
      return Error{"cannot read a path the target names: " +
                   done.error().message};
    const auto end = bytes.find('\0');
    path += bytes.substr(0, end);
    if (end != std::string::npos)
      return path;
    address += chunk;
  }
  return Error{"a path the target names is longer than PATH_MAX"};
}

// path made absolute against the directory dirfd names (AT_FDCWD: the
// target's working directory), as the target sees it, and normalised.
// Symbolic links are not followed.
Result<std::string> resolve(const ProcessAccess &tracee, long dirfd,
                            const std::string &path) {
  if (path.starts_with('/'))
    return fs::path(path).lexically_normal().string();
  const std::string link = dirfd == AT_FDCWD
                               ? fmt::format("/proc/{}/cwd", tracee.pid())
                               : fmt::format("/proc/{}/fd/{}", tracee.pid(),
                                             static_cast<int>(dirfd));
  std::array<char, PATH_MAX> base{};
  const ssize_t n = readlink(link.c_str(), base.data(), base.size());
  if (n <= 0)
    return system_error(
        fmt::format("cannot resolve the path {} the target names: {}", path,
                    link),
        errno);
  return (fs::path(std::string(base.data(), static_cast<std::size_t>(n))) /
          path)
      .lexically_normal()
      .string();
}

// openat2's flags are in its struct open_how, whose first field they are.
bool openat2_writes(const ProcessAccess &tracee,
                    RemotePtr<std::uint64_t> flags_at) {
  auto flags = tracee.read(flags_at);
  return !flags || (*flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
}

} // namespace

Result<Action> on_write_path(SeccompStop &stop) {
  const ProcessAccess &tracee = stop.tracee;
  const Syscall &call = stop.call;
  const auto args = stop.args();
  if (call.name == "openat2" &&
      !openat2_writes(tracee, stop.regs.arg_ptr<std::uint64_t>(2)))
    return Action::run();
  for (const PathArg &arg : call.paths) {
    if (arg.path < 0)
      continue;
    auto named = read_path(tracee, args.at(arg.path));
    if (!named)
      return named.error();
    const long dirfd =
        arg.dirfd < 0 ? AT_FDCWD : static_cast<int>(args.at(arg.dirfd));
    auto path = resolve(tracee, dirfd, *named);
    if (!path)
      return path.error();
    auto inside = tracee.namespace_tid(tracee.pid());
    if (!inside)
      return inside.error();
    if (tracee.may_write(*path) ||
        path_under(*path, fmt::format("/proc/{}", *inside)))
      continue;
    return Error{fmt::format(
        "the target writes {} ({}), outside its working directory and the "
        "--writable copies; --writable {} gives each run a private copy",
        *path, call.name, fs::path(*path).parent_path().string())};
  }
  return Action::run();
}

} // namespace cmc::tracer
