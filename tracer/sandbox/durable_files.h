#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "util/result.h"

namespace cmc::tracer {

// What of a run's files would survive a crash of the machine (--crash):
// the durability model of ALICE (OSDI'14) and CrashMonkey. The kernel
// keeps a write in its page cache until it writes it back; only fsync,
// fdatasync, sync_file_range(SYNC_FILE_RANGE_WAIT_AFTER), an O_SYNC or
// O_DSYNC write, msync(MS_SYNC), sync and syncfs wait until it is on the
// disk. So a file holds, after a crash, what it held at its last sync; a
// name (a creation, rename or unlink) is durable once its directory is
// synced, or once the file it names is synced (as ext4, xfs and btrfs
// commit a new file's entry with it). Everything as it was when the run
// started is durable.
class DurableFiles {
public:
  // Everything under root (a directory as cmc reaches it) as it is now.
  [[nodiscard]] static Result<DurableFiles> record(std::string root);

  // The file or directory with this identity was synced: a file's bytes
  // and names become durable; a directory's entries do (their files hold
  // what they held at their last sync, or nothing). Nothing happens for
  // a file outside root (a device, a file the target only reads).
  [[nodiscard]] Result<void> sync(dev_t device, ino_t inode);
  // What the descriptor fd of process pid names was synced.
  [[nodiscard]] Result<void> sync_descriptor(pid_t pid, int fd);
  // Every descriptor of pid opened with O_SYNC or O_DSYNC: what was
  // written through it is durable.
  [[nodiscard]] Result<void> sync_synchronous_descriptors(pid_t pid);
  // sync(2): everything.
  [[nodiscard]] Result<void> sync_all();

  // Makes the files under root what the durable image holds (the crash),
  // which is then all durable.
  [[nodiscard]] Result<void> restore();

  // The hash of the durable image (names, types, contents), for the
  // fingerprint: two states whose files are equal but whose durable
  // versions differ are different states.
  [[nodiscard]] std::uint64_t hash() const;

private:
  // A file by identity: its inode number and birth time (the kernel
  // reuses the number of a deleted file for a new one; 0 where the file
  // system keeps no birth time).
  using FileId = std::pair<ino_t, std::int64_t>;
  // A name: what it names (its st_mode: type and permissions) and which
  // file.
  struct Entry {
    mode_t mode = 0;
    FileId file{};
  };
  using Names = std::map<std::string, Entry>;
  explicit DurableFiles(std::string root) : root_(std::move(root)) {}
  // The names under root (relative to it) now.
  [[nodiscard]] Result<Names> scan() const;
  // Keeps the bytes of the file (or a link's target) name names now.
  [[nodiscard]] Result<void> keep_content(const std::string &name,
                                          const Entry &entry);
  // The entries of directory name (relative, "" for root) become those
  // it has now.
  void sync_directory(const std::string &name, const Names &now);

  std::string root_;
  dev_t device_ = 0;
  ino_t root_inode_ = 0;
  // The durable names, relative to root_, and the durable contents by
  // file (a file's bytes at its last sync).
  Names names_;
  std::map<FileId, std::string> contents_;
};

} // namespace cmc::tracer
