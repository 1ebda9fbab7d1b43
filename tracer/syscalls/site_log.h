#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "decoder/proc_maps.h"
#include "tracer/syscalls/syscall_watcher.h"
#include "util/result.h"

namespace cmc::tracer {

// A system call instruction seen executing, placed where it came from.
struct ObservedSite {
  std::string path;     // the mapping's file, "[vdso]", or "" (anonymous)
  decoder::FileId file; // of a file mapping
  // Of the instruction in the file (in the vDSO: in its image).
  std::uint64_t file_offset = 0;
  std::string vdso_function; // the patched vDSO function holding it, or ""
  std::vector<long> numbers; // the system call numbers made there, sorted
  std::size_t count = 0;     // stops at it
};

// The system call sites one run of a target executed, each placed in its
// file as /proc/PID/maps showed it when the site first stopped (so a site
// stays placed after the target unmaps it or exits).
class SiteLog final : public SyscallWatcher {
public:
  // Records the stop's site (Registers::syscall_site) and number.
  [[nodiscard]] Result<void> entered(const ProcessAccess &tracee,
                                     const VdsoLayout &vdso,
                                     const Registers &regs) override;
  void new_program() override { by_address_.clear(); }

  [[nodiscard]] const std::vector<ObservedSite> &sites() const {
    return sites_;
  }
  // The site of the call entered last, or nullptr before any.
  [[nodiscard]] const ObservedSite *last() const {
    return last_ < sites_.size() ? &sites_[last_] : nullptr;
  }

private:
  std::unordered_map<std::uint64_t, std::size_t> by_address_;
  std::vector<ObservedSite> sites_;
  std::size_t last_ = static_cast<std::size_t>(-1);
};

} // namespace cmc::tracer
