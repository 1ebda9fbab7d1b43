#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "decoder/proc_maps.h"
#include "tracer/tracee.h"
#include "util/result.h"

namespace cmc::bench {

// What a restore in place writes back: the pages of the target's writable
// mappings that were in memory at a quiescent point, and the registers of
// its thread. A page swapped out is not saved: pagemap shows a page
// write-protected by a userfaultfd before it was ever touched as swapped
// too (the kernel keeps the protection in a swap-like entry).
struct SavedPages {
  user_regs_struct registers{};
  std::vector<decoder::Mapping> maps;
  std::vector<iovec> pages;                       // in address order
  std::map<std::uint64_t, std::size_t> offset_of; // page -> into bytes
  std::vector<std::byte> bytes;

  // Reads the stopped target's pages, registers and mappings.
  [[nodiscard]] static Result<SavedPages> save(const tracer::Tracee &tracee);

  // Reads the saved pages again, as they are now, into bytes (the same
  // size as this->bytes).
  [[nodiscard]] Result<void> read_now(const tracer::Tracee &tracee,
                                      std::span<std::byte> now) const;

  // Writes the saved bytes of the pages written since back, each run of
  // adjacent pages in one process_vm_writev, and the registers. Returns
  // how many of the written pages were not saved (not in memory then: what
  // they held, zeros or a file's bytes, is not written back).
  [[nodiscard]] Result<std::size_t>
  write_back(tracer::Tracee &tracee,
             std::span<const std::uint64_t> written) const;
};

} // namespace cmc::bench
