#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "decoder/elf_file.h"
#include "decoder/proc_maps.h"
#include "decoder/syscall_scan.h"
#include "tracer/syscalls/site_log.h"

namespace cmc::app {

// One scanned file: its sites and what places them in a run.
struct Module {
  std::string path;
  decoder::FileId id; // from stat
  std::vector<decoder::LoadSegment> loads;
  decoder::FileSites file;
};

// A site a run executed that no scanned site matches.
struct UnscannedSite {
  std::string path; // the mapping's file; "" for anonymous memory
  // A scanned module's link-time address; otherwise the file offset.
  std::uint64_t address = 0;
  bool in_module = false; // a file cmc scanned: the scan missed this site
  const tracer::ObservedSite *seen = nullptr;
};

// A vDSO function the run called, and how often.
struct VdsoCall {
  std::string function; // "__vdso_clock_gettime", or "" outside any
  std::size_t calls = 0;
};

// The observed sites of a run laid over the scan of the same files.
struct SiteMarks {
  // stops[m][s]: how often site s of module m stopped (0: never reached).
  std::vector<std::vector<std::size_t>> stops;
  std::vector<VdsoCall> vdso_calls;
  std::vector<UnscannedSite> unscanned;
};

// The scanned site an observed one is, or nullptr (the vDSO, a file not
// scanned, a site the scan missed).
[[nodiscard]] const decoder::SyscallSite *
scanned_site(const std::vector<Module> &modules,
             const tracer::ObservedSite &seen);

// Places each observed site in the module of the same file (by device and
// inode: maps shows resolved paths) through the PT_LOAD holding its file
// offset, and matches it to the scanned site at that link-time address.
[[nodiscard]] SiteMarks
mark_sites(const std::vector<Module> &modules,
           const std::vector<tracer::ObservedSite> &observed);

} // namespace cmc::app
