#pragma once

#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The handlers of the calls that make written files durable (--crash):
// each notes, before the call runs, what it will have written to the disk
// once it returns (DurableFiles). Without --crash they only run.

// fsync(fd), fdatasync(fd), syncfs(fd) of a file: that file; of a
// directory: its entries.
[[nodiscard]] Result<Action> on_fsync(SeccompStop &stop);
// sync_file_range(fd, offset, nbytes, flags) with
// SYNC_FILE_RANGE_WAIT_AFTER: that file (the range is taken as the file).
[[nodiscard]] Result<Action> on_sync_file_range(SeccompStop &stop);
// msync(addr, length, MS_SYNC): the file mapped at addr.
[[nodiscard]] Result<Action> on_msync(SeccompStop &stop);
// sync(): every file.
[[nodiscard]] Result<Action> on_sync(SeccompStop &stop);

} // namespace cmc::tracer
