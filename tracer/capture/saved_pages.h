#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "decoder/proc_maps.h"
#include "tracer/process/tracee.h"
#include "util/result.h"

namespace cmc::tracer {

// What a restore in place writes back: the pages of the target's writable
// mappings that were in memory (or swapped out) at a quiescent point, and
// the registers of its focused thread.
struct SavedPages {
  Registers registers{};
  std::vector<std::byte> extended; // Tracee::extended_registers
  std::vector<decoder::Mapping> maps;
  std::vector<iovec> pages;                       // in address order
  std::map<std::uint64_t, std::size_t> offset_of; // page -> into bytes
  std::vector<std::byte> bytes;

  // Reads the stopped target's pages, registers and mappings.
  [[nodiscard]] static Result<SavedPages> save(const Tracee &tracee);

  // Reads the saved pages again, as they are now, into bytes (the same
  // size as this->bytes).
  [[nodiscard]] Result<void> read_now(const Tracee &tracee,
                                      std::span<std::byte> now) const;

  // The pages of the writable mappings in memory now that differ from
  // their saved copy or were not saved, in address order; now is scratch
  // space for the pages as they are now.
  [[nodiscard]] Result<std::vector<std::uint64_t>>
  written(const Tracee &tracee, std::vector<std::byte> &now) const;

  // Writes the saved bytes of the pages written since back, each run of
  // adjacent pages in one process_vm_writev, and the registers. A written
  // page that was not saved held zeros if it is private anonymous memory
  // (it was never touched): zeros are written back. Returns how many of
  // the others there were (what they held, a file's bytes, is not known:
  // they are not written back).
  [[nodiscard]] Result<std::size_t>
  write_back(Tracee &tracee, std::span<const std::uint64_t> written) const;

  // The bytes this copy holds.
  [[nodiscard]] std::size_t size() const {
    return bytes.size() + extended.size();
  }
};

} // namespace cmc::tracer
