#include "tracer/syscalls/file_syncs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "tracer/process/process_access.h"
#include "tracer/sandbox/durable_files.h"

namespace cmc::tracer {

Result<Action> on_fsync(SeccompStop &stop) {
  DurableFiles *durable = stop.tracee.durable_files();
  if (durable == nullptr)
    return Action::run();
  if (auto synced = durable->sync_descriptor(
          stop.tracee.pid(), static_cast<int>(stop.regs.arg(0)));
      !synced)
    return synced.error();
  return Action::run();
}

Result<Action> on_sync_file_range(SeccompStop &stop) {
  // Without WAIT_AFTER the call only starts the write-back, or waits for
  // one already started: nothing is known to be on the disk.
  if ((stop.regs.arg(3) & SYNC_FILE_RANGE_WAIT_AFTER) == 0)
    return Action::run();
  return on_fsync(stop);
}

Result<Action> on_msync(SeccompStop &stop) {
  DurableFiles *durable = stop.tracee.durable_files();
  // MS_ASYNC only schedules the write-back (and on Linux does nothing).
  if (durable == nullptr || (stop.regs.arg(2) & MS_SYNC) == 0)
    return Action::run();
  auto maps = stop.tracee.maps();
  if (!maps)
    return maps.error();
  const std::uint64_t address = stop.regs.arg(0);
  for (const decoder::Mapping &mapping : *maps)
    if (address >= mapping.start && address < mapping.end && mapping.inode != 0)
      if (auto synced = durable->sync(
              makedev(mapping.dev_major, mapping.dev_minor), mapping.inode);
          !synced)
        return synced.error();
  return Action::run();
}

Result<Action> on_sync(SeccompStop &stop) {
  DurableFiles *durable = stop.tracee.durable_files();
  if (durable == nullptr)
    return Action::run();
  if (auto synced = durable->sync_all(); !synced)
    return synced.error();
  return Action::run();
}

} // namespace cmc::tracer
