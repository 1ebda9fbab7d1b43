#pragma once

#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "executor/executor.h"
#include "tracer/sandbox/durable_files.h"
#include "util/result.h"

namespace cmc::tracer {

class Sandbox;

// One --writable path of a run: what the target names (as given: relative
// to its working directory, or absolute) and where cmc keeps the run's
// private copy of it.
struct WritableCopy {
  std::string path; // as the target sees it
  std::string copy; // as the target sees it (in the sandbox's tmpfs),
                    // bind-mounted over path in the run's mount namespace
};

// The files of one run: a directory made for it (root) in the tmpfs of a
// Sandbox, holding its working directory and the copies of absolute
// --writable paths; removed with everything in it by the destructor, or
// with the sandbox if cmc dies first. Paths are as the target sees them,
// in the sandbox's mount namespace; cmc reaches them through the sandbox's
// init (Sandbox::outside). Only the target's own mount namespace sees the
// copies at their paths.
class RunFiles {
public:
  // Makes root and the copy of every writable path: of it as it is now (a
  // relative path from cmc's working directory), or an empty directory
  // for a relative one that does not exist. With durable, it also keeps
  // what of them would survive a crash (DurableFiles, --crash).
  [[nodiscard]] static Result<RunFiles>
  create(std::span<const std::string> writable, const Sandbox &sandbox,
         bool durable = false);

  RunFiles(RunFiles &&other) noexcept;
  RunFiles &operator=(RunFiles &&) = delete;
  RunFiles(const RunFiles &) = delete;
  RunFiles &operator=(const RunFiles &) = delete;
  ~RunFiles();

  [[nodiscard]] const std::string &workdir() const { return workdir_; }
  // The copies of absolute paths, to bind-mount.
  [[nodiscard]] const std::vector<WritableCopy> &mounts() const {
    return mounts_;
  }

  // Whether the target may write at path (absolute, normalised, as the
  // target sees it): in its working directory, in a writable copy, or a
  // harmless device or file of its own /proc.
  [[nodiscard]] bool may_write(const std::string &path) const;

  // Every file the run can write (its working directory and the copies),
  // hashed per top-level entry, sorted by name. Empty when there are none.
  [[nodiscard]] Result<std::vector<executor::FileDigest>> digest() const;

  // What of the files would survive a crash; nullptr unless created
  // durable.
  [[nodiscard]] DurableFiles *durable() {
    return durable_ ? &*durable_ : nullptr;
  }
  [[nodiscard]] const DurableFiles *durable() const {
    return durable_ ? &*durable_ : nullptr;
  }

private:
  RunFiles() = default;
  std::string outside_; // prefix of the paths by which cmc reaches them
  std::string root_;
  std::string workdir_;
  std::vector<WritableCopy> mounts_;
  std::optional<DurableFiles> durable_;
};

// The hash of a digest, for the fingerprint: 0 when there are no files.
[[nodiscard]] std::uint64_t
combined_hash(std::span<const executor::FileDigest> digest);

// Whether path is directory or lies inside it (both absolute, normalised).
[[nodiscard]] bool path_under(std::string_view path,
                              std::string_view directory);

} // namespace cmc::tracer
