#include "tracer/sandbox/run_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "tracer/sandbox/sandbox.h"
#include "util/fingerprint.h"
#include "util/unique_fd.h"

namespace cmc::tracer {
namespace fs = std::filesystem;
namespace {

// In the sandbox's tmpfs: a directory made and removed on a journaling
// file system costs about as much as the rest of a spawn (150 us on ext4,
// 5 us on tmpfs). Returns it as the target sees it. Named by the first
// number free in this sandbox, so the same in every run of a path: a
// target keeps its working directory (lighttpd keeps getcwd()), and a
// name of mkdtemp's differed in every run. The sandbox is this thread's
// and its runs follow each other: only a run made while another lives
// (the replay that checks a snapshot) gets another number.
Result<std::string> make_root(const std::string &outside) {
  for (int number = 0;; ++number) {
    const std::string inside =
        fmt::format("{}/cmc-run-{}", Sandbox::kRunsDirectory, number);
    if (mkdir((outside + inside).c_str(), 0700) == 0)
      return inside;
    if (errno != EEXIST)
      return system_error(
          fmt::format("cannot create a working directory for the target in {}",
                      outside + inside),
          errno);
  }
}

// Gives to the owner, group and mode of from (std::filesystem::copy
// keeps neither owner nor group): a server that drops its privileges
// writes its copy as it would write the original (exim4's /var/log/exim4,
// Debian-exim's and setgid). chown clears the set-id bits: mode after.
bool same_owner(const fs::path &from, const fs::path &to) {
  struct stat info {};
  if (lstat(from.c_str(), &info) != 0 ||
      lchown(to.c_str(), info.st_uid, info.st_gid) != 0)
    return false;
  return S_ISLNK(info.st_mode) || chmod(to.c_str(), info.st_mode & 07777) == 0;
}

// A copy of from at to, symbolic links as links, owners and modes kept;
// nothing at from (a relative --writable path that does not exist): an
// empty directory.
Result<void> copy_writable(const fs::path &from, const fs::path &to) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(from, error))) {
    fs::create_directories(to, error);
  } else {
    fs::create_directories(to.parent_path(), error);
    if (!error)
      fs::copy(from, to,
               fs::copy_options::recursive | fs::copy_options::copy_symlinks,
               error);
    bool kept = !error && same_owner(from, to);
    if (kept && fs::is_directory(fs::symlink_status(from, error)))
      for (fs::recursive_directory_iterator entry(from, error), end;
           kept && !error && entry != end; entry.increment(error))
        kept = same_owner(entry->path(),
                          to / fs::relative(entry->path(), from, error));
    if (!kept && !error)
      error = std::error_code(errno, std::system_category());
  }
  if (error)
    return Error{fmt::format("cannot make the run's copy of --writable {}: {}",
                             from.string(), error.message())};
  return {};
}

// Appends what decides a file's future reads: its name, type, mode, size,
// and its contents or a link's target.
Result<void> hash_entry(const fs::path &path, const std::string &name,
                        std::uint64_t &hash) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0)
    return system_error(fmt::format("cannot stat {}", path.string()), errno);
  const auto mix = [&hash](std::span<const std::byte> bytes) {
    hash = fingerprint_of(bytes, hash).low;
  };
  const std::array<std::uint64_t, 2> meta{
      info.st_mode, static_cast<std::uint64_t>(info.st_size)};
  mix(std::as_bytes(std::span(name)));
  mix(std::as_bytes(std::span(meta)));
  if (S_ISLNK(info.st_mode)) {
    std::array<char, PATH_MAX> target{};
    const ssize_t n = readlink(path.c_str(), target.data(), target.size());
    mix(std::as_bytes(std::span(target.data(), n > 0 ? n : 0)));
  } else if (S_ISREG(info.st_mode)) {
    const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid())
      return system_error(fmt::format("cannot open {}", path.string()), errno);
    std::array<std::byte, std::size_t{64} * 1024> buffer{};
    ssize_t got = 0;
    while ((got = read(fd.get(), buffer.data(), buffer.size())) > 0)
      mix(std::span(buffer.data(), static_cast<std::size_t>(got)));
  }
  return {};
}

// The hash of top and everything under it, in name order.
Result<std::uint64_t> hash_tree(const fs::path &top) {
  std::vector<fs::path> entries{top};
  std::error_code error;
  if (fs::is_directory(fs::symlink_status(top, error)))
    for (fs::recursive_directory_iterator it(top, error), end;
         !error && it != end; it.increment(error))
      entries.push_back(it->path());
  if (error)
    return Error{
        fmt::format("cannot list {}: {}", top.string(), error.message())};
  std::sort(entries.begin(), entries.end());
  std::uint64_t hash = 0;
  for (const fs::path &entry : entries)
    if (auto done = hash_entry(entry, entry.lexically_relative(top), hash);
        !done)
      return done.error();
  return hash;
}

// Devices whose writes change nothing a later read sees.
constexpr std::array<std::string_view, 9> kHarmless{
    "/dev/null",   "/dev/zero",   "/dev/full",    "/dev/tty", "/dev/stdout",
    "/dev/stderr", "/dev/random", "/dev/urandom", "/dev/fd"};

} // namespace

bool path_under(std::string_view path, std::string_view directory) {
  return path.starts_with(directory) &&
         (path.size() == directory.size() || path[directory.size()] == '/');
}

Result<RunFiles> RunFiles::create(std::span<const std::string> writable,
                                  const Sandbox &sandbox, bool durable) {
  RunFiles files;
  files.outside_ = sandbox.outside("");
  auto root = make_root(files.outside_);
  if (!root)
    return root.error();
  files.root_ = std::move(*root);
  files.workdir_ = files.root_;
  // The copies of absolute paths go beside the working directory, out of
  // its listing; without any, the root is the working directory (a mkdir
  // and rmdir fewer per run).
  if (std::any_of(
          writable.begin(), writable.end(),
          [](const std::string &path) { return path.starts_with('/'); })) {
    files.workdir_ += "/work";
    if (mkdir((files.outside_ + files.workdir_).c_str(), 0700) != 0)
      return system_error(fmt::format("cannot create {}", files.workdir_),
                          errno);
  }
  for (const std::string &path : writable) {
    if (!path.starts_with('/')) {
      if (auto copied = copy_writable(
              path, fs::path(files.outside_ + files.workdir_) / path);
          !copied)
        return copied.error();
      continue;
    }
    WritableCopy mount{path,
                       fmt::format("{}/{}", files.root_, files.mounts_.size())};
    if (auto copied = copy_writable(path, files.outside_ + mount.copy); !copied)
      return copied.error();
    files.mounts_.push_back(std::move(mount));
  }
  if (durable) {
    auto recorded = DurableFiles::record(files.outside_ + files.root_);
    if (!recorded)
      return recorded.error();
    files.durable_.emplace(std::move(*recorded));
  }
  return files;
}

RunFiles::RunFiles(RunFiles &&other) noexcept
    : outside_(std::move(other.outside_)), root_(std::move(other.root_)),
      workdir_(std::move(other.workdir_)), mounts_(std::move(other.mounts_)),
      durable_(std::move(other.durable_)) {
  other.root_.clear();
}

RunFiles::~RunFiles() {
  if (root_.empty())
    return;
  std::error_code ignored;
  fs::remove_all(outside_ + root_, ignored);
}

bool RunFiles::may_write(const std::string &path) const {
  if (path_under(path, root_))
    return true;
  for (const WritableCopy &mount : mounts_)
    if (path_under(path, mount.path))
      return true;
  return std::any_of(kHarmless.begin(), kHarmless.end(),
                     [&](std::string_view device) {
                       return path_under(path, device);
                     }) ||
         path_under(path, "/proc/self") ||
         path_under(path, "/proc/thread-self");
}

Result<std::vector<executor::FileDigest>> RunFiles::digest() const {
  std::vector<executor::FileDigest> digest;
  std::error_code error;
  for (fs::directory_iterator it(outside_ + workdir_, error), end;
       !error && it != end; it.increment(error)) {
    auto hash = hash_tree(it->path());
    if (!hash)
      return hash.error();
    digest.push_back({"./" + it->path().filename().string(), *hash});
  }
  if (error)
    return Error{fmt::format("cannot list the target's working directory "
                             "{}: {}",
                             workdir_, error.message())};
  for (const WritableCopy &mount : mounts_) {
    auto hash = hash_tree(outside_ + mount.copy);
    if (!hash)
      return hash.error();
    digest.push_back({mount.path, *hash});
  }
  std::sort(digest.begin(), digest.end(),
            [](const executor::FileDigest &a, const executor::FileDigest &b) {
              return a.name < b.name;
            });
  return digest;
}

std::uint64_t combined_hash(std::span<const executor::FileDigest> digest) {
  std::uint64_t hash = 0;
  for (const executor::FileDigest &entry : digest) {
    const std::array<std::uint64_t, 2> pair{
        fingerprint_of(std::as_bytes(std::span(entry.name))).low, entry.hash};
    hash = fingerprint_of(std::as_bytes(std::span(pair)), hash).low;
  }
  return hash;
}

} // namespace cmc::tracer
