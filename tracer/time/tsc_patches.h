#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "decoder/syscall_scan.h"
#include "tracer/process/process_access.h"
#include "util/result.h"

namespace cmc::tracer {

// Whether rdtsc and rdtscp fault in a process that set
// prctl(PR_SET_TSC, PR_TSC_SIGSEGV). The kernel then sets CR4.TSD for it,
// but a hypervisor may run the guest's rdtsc natively regardless (seen on
// AMD EPYC guests): the prctl returns 0 and nothing traps. Probed once per
// cmc process, by a child that sets it and runs rdtsc. CMC_RDTSC=patch in
// the environment answers false, to use the patches on any machine.
[[nodiscard]] bool tsc_traps();

// Scans an executable and the libraries ld.so will load for it into the
// cache of TscPatches (once per executable file per cmc process), so that
// patching at the entry breakpoint, within a step's timeout, finds them
// scanned (libc takes ~0.2 s). Best effort, at the exec stop.
void scan_tsc_ahead(const std::string &executable);

// The target's rdtsc and rdtscp instructions, each patched with int3 where
// PR_SET_TSC does not trap, and where it does until the program's entry
// (ld.so and the constructors run before cmc sets it there): a SIGTRAP one
// past a site is that instruction, to answer. Every file mapped executable is
// scanned (decoder's sweep, cached per file for the life of cmc) and patched; a
// file mapped later (dlopen) is patched when ld.so calls _dl_debug_state, whose
// first byte (a ret) is a breakpoint too.
class TscPatches {
public:
  // Patches the sites of the executable file mappings not patched yet and
  // forgets those unmapped.
  [[nodiscard]] Result<void> patch_mapped(ProcessAccess &tracee);
  // Gives every patched site its instruction back and _dl_debug_state its
  // ret, and forgets them: where PR_SET_TSC traps, from the entry on.
  [[nodiscard]] Result<void> unpatch_all(ProcessAccess &tracee);
  // Forgets every patch without undoing it: at an exec, whose new image
  // holds none of the old one's patches, though its files may be mapped
  // where the old one's were (without ASLR a wrapper's libc and the
  // server's share an address), so that patch_mapped patches them anew.
  // What the old program ran (unscanned(), cpu_sites()) stays: the run
  // ran it.
  void forget() {
    sites_.clear();
    mappings_.clear();
    debug_state_.reset();
  }
  // The site whose int3 is at address, or nullptr.
  [[nodiscard]] const decoder::TscSite *site_at(std::uint64_t address) const;
  // Whether address is ld.so's _dl_debug_state, patched.
  [[nodiscard]] bool debug_state_at(std::uint64_t address) const {
    return debug_state_ == address;
  }
  // Sites patched (in the mappings present at the last patch_mapped).
  [[nodiscard]] std::size_t count() const { return sites_.size(); }
  // The cpuid, rdrand, rdseed and rdpid instructions of the files
  // patched, each as its file's name and offset ("libc.so.6+0x1a2b"):
  // the sites that read the CPU where CPUID faulting cannot hide it.
  [[nodiscard]] const std::set<std::pair<decoder::CpuInstruction, std::string>>
      &cpu_sites() const {
    return cpu_sites_;
  }
  // Files mapped executable that cmc could not scan: their rdtsc would run
  // uncontrolled.
  [[nodiscard]] const std::vector<std::string> &unscanned() const {
    return unscanned_;
  }

private:
  struct Patched {
    std::uint64_t end = 0;
    std::uint64_t inode = 0;
  };
  // Patches one executable mapping of a file.
  [[nodiscard]] Result<void> patch(ProcessAccess &tracee,
                                   const decoder::Mapping &mapping);

  std::map<std::uint64_t, decoder::TscSite> sites_; // by run-time address
  std::map<std::uint64_t, Patched> mappings_;       // by start address
  std::optional<std::uint64_t> debug_state_;
  std::vector<std::string> unscanned_;
  std::set<std::pair<decoder::CpuInstruction, std::string>> cpu_sites_;
};

} // namespace cmc::tracer
