#include "tracer/sandbox/durable_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "util/fingerprint.h"
#include "util/unique_fd.h"

namespace cmc::tracer {
namespace fs = std::filesystem;
namespace {

// The whole of a file or a link's target.
Result<std::string> read_whole(const std::string &path, mode_t mode) {
  if (S_ISLNK(mode)) {
    std::array<char, PATH_MAX> target{};
    const ssize_t n = readlink(path.c_str(), target.data(), target.size());
    if (n < 0)
      return system_error(fmt::format("cannot read the link {}", path), errno);
    return std::string(target.data(), static_cast<std::size_t>(n));
  }
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid())
    return system_error(fmt::format("cannot open {}", path), errno);
  std::string bytes;
  std::array<char, std::size_t{64} * 1024> buffer{};
  ssize_t got = 0;
  while ((got = read(fd.get(), buffer.data(), buffer.size())) > 0)
    bytes.append(buffer.data(), static_cast<std::size_t>(got));
  if (got < 0)
    return system_error(fmt::format("cannot read {}", path), errno);
  return bytes;
}

// The directory a relative name is in ("" for root).
std::string_view parent_of(std::string_view name) {
  const auto slash = name.rfind('/');
  return slash == std::string_view::npos ? std::string_view()
                                         : name.substr(0, slash);
}

// Whether name lies under directory (relative; "" is root).
bool under(std::string_view name, std::string_view directory) {
  return directory.empty() ||
         (name.starts_with(directory) && name.size() > directory.size() &&
          name[directory.size()] == '/');
}

// The entry of directory that name is, or lies under ("a/b" of "a/b/c" in
// "a").
std::string_view child_of(std::string_view name, std::string_view directory) {
  const std::size_t start = directory.empty() ? 0 : directory.size() + 1;
  const auto slash = name.find('/', start);
  return slash == std::string_view::npos ? name : name.substr(0, slash);
}

Result<void> write_file(const std::string &path, const std::string &bytes,
                        mode_t mode) {
  if (S_ISLNK(mode)) {
    if (symlink(bytes.c_str(), path.c_str()) != 0)
      return system_error(fmt::format("cannot restore the link {}", path),
                          errno);
    return {};
  }
  const UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                         mode & 07777));
  if (!fd.valid())
    return system_error(fmt::format("cannot restore {}", path), errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0)
      return system_error(fmt::format("cannot restore {}", path), errno);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

} // namespace

Result<DurableFiles> DurableFiles::record(std::string root) {
  DurableFiles durable(std::move(root));
  struct stat top {};
  if (stat(durable.root_.c_str(), &top) != 0)
    return system_error(fmt::format("cannot stat {}", durable.root_), errno);
  durable.device_ = top.st_dev;
  durable.root_inode_ = top.st_ino;
  auto names = durable.scan();
  if (!names)
    return names.error();
  durable.names_ = std::move(*names);
  for (const auto &[name, entry] : durable.names_)
    if (auto kept = durable.keep_content(name, entry); !kept)
      return kept.error();
  return durable;
}

Result<DurableFiles::Names> DurableFiles::scan() const {
  Names names;
  std::error_code error;
  for (fs::recursive_directory_iterator it(root_, error), end;
       !error && it != end; it.increment(error)) {
    struct statx info {};
    if (statx(AT_FDCWD, it->path().c_str(), AT_SYMLINK_NOFOLLOW,
              STATX_BASIC_STATS | STATX_BTIME, &info) != 0)
      return system_error(fmt::format("cannot stat {}", it->path().string()),
                          errno);
    const std::int64_t birth =
        (info.stx_mask & STATX_BTIME) == 0
            ? 0
            : info.stx_btime.tv_sec * 1'000'000'000LL + info.stx_btime.tv_nsec;
    names.emplace(it->path().lexically_relative(root_).string(),
                  Entry{info.stx_mode, {info.stx_ino, birth}});
  }
  if (error)
    return Error{fmt::format("cannot list {}: {}", root_, error.message())};
  return names;
}

Result<void> DurableFiles::keep_content(const std::string &name,
                                        const Entry &entry) {
  if (S_ISDIR(entry.mode))
    return {};
  auto bytes = read_whole(root_ + "/" + name, entry.mode);
  if (!bytes)
    return bytes.error();
  contents_[entry.file] = std::move(*bytes);
  return {};
}

Result<void> DurableFiles::sync(dev_t device, ino_t inode) {
  if (device != device_)
    return {};
  auto now = scan();
  if (!now)
    return now.error();
  if (inode == root_inode_)
    sync_directory("", *now);
  bool kept = false;
  for (const auto &[name, entry] : *now) {
    if (entry.file.first != inode)
      continue;
    if (S_ISDIR(entry.mode)) {
      sync_directory(name, *now);
      continue;
    }
    if (!kept) {
      if (auto done = keep_content(name, entry); !done)
        return done.error();
      kept = true;
    }
    // Its name, and the directories it is in, as a journaling file system
    // commits them with the file.
    names_[name] = entry;
    for (std::string_view up = parent_of(name); !up.empty(); up = parent_of(up))
      names_.try_emplace(std::string(up), now->at(std::string(up)));
  }
  return {};
}

void DurableFiles::sync_directory(const std::string &name, const Names &now) {
  Names durable;
  for (auto &[path, entry] : names_) {
    if (!under(path, name)) {
      durable.emplace(path, entry);
      continue;
    }
    // Below an entry that is still a directory here, what was durable
    // stays so; the entries themselves are those of now.
    const std::string child(child_of(path, name));
    const auto it = now.find(child);
    if (path != child && it != now.end() && S_ISDIR(it->second.mode))
      durable.emplace(path, entry);
  }
  for (const auto &[path, entry] : now)
    if (under(path, name) && child_of(path, name) == path)
      durable[path] = entry;
  names_ = std::move(durable);
}

Result<void> DurableFiles::sync_descriptor(pid_t pid, int fd) {
  struct stat info {};
  if (stat(fmt::format("/proc/{}/fd/{}", pid, fd).c_str(), &info) != 0)
    return {}; // not open: the call fails with EBADF and syncs nothing
  return sync(info.st_dev, info.st_ino);
}

Result<void> DurableFiles::sync_synchronous_descriptors(pid_t pid) {
  const std::string directory = fmt::format("/proc/{}/fdinfo", pid);
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    auto text = read_whole(it->path().string(), S_IFREG);
    if (!text)
      continue; // closed meanwhile
    const auto at = text->find("flags:");
    if (at == std::string::npos)
      continue;
    const unsigned long flags =
        std::strtoul(text->c_str() + at + 6, nullptr, 8);
    if ((flags & O_DSYNC) == 0) // O_SYNC is O_DSYNC and one more bit
      continue;
    const int fd = std::atoi(it->path().filename().c_str());
    if (auto synced = sync_descriptor(pid, fd); !synced)
      return synced;
  }
  if (error)
    return Error{fmt::format("cannot list {}: {}", directory, error.message())};
  return {};
}

Result<void> DurableFiles::sync_all() {
  auto now = record(root_);
  if (!now)
    return now.error();
  *this = std::move(*now);
  return {};
}

Result<void> DurableFiles::restore() {
  std::error_code error;
  for (fs::directory_iterator it(root_, error), end; !error && it != end;
       it.increment(error))
    fs::remove_all(it->path(), error);
  if (error)
    return Error{fmt::format("cannot empty {} for the crash: {}", root_,
                             error.message())};
  for (const auto &[name, entry] : names_) {
    const std::string path = root_ + "/" + name;
    fs::create_directories(fs::path(path).parent_path(), error);
    if (S_ISDIR(entry.mode)) {
      if (mkdir(path.c_str(), entry.mode & 07777) != 0 && errno != EEXIST)
        return system_error(fmt::format("cannot restore {}", path), errno);
      continue;
    }
    const auto content = contents_.find(entry.file);
    if (auto written = write_file(
            path, content == contents_.end() ? std::string() : content->second,
            entry.mode);
        !written)
      return written;
  }
  return sync_all();
}

std::uint64_t DurableFiles::hash() const {
  std::uint64_t hash = 0;
  for (const auto &[name, entry] : names_) {
    const auto content = contents_.find(entry.file);
    const std::array<std::uint64_t, 2> meta{
        entry.mode,
        content == contents_.end()
            ? 0
            : fingerprint_of(std::as_bytes(std::span(content->second))).low};
    hash = fingerprint_of(std::as_bytes(std::span(name)), hash).low;
    hash = fingerprint_of(std::as_bytes(std::span(meta)), hash).low;
  }
  return hash;
}

} // namespace cmc::tracer
