#pragma once

#include <string>
#include <vector>

#include "app/cli/site_marks.h"
#include "decoder/syscall_scan.h"

namespace cmc::app {

// The system call sites of a binary as scan and explore list them.

// The binary and the shared libraries it loads, each scanned; throws
// UserError.
[[nodiscard]] std::vector<Module> scan_modules(const std::string &binary);

// Prints the inline and unknown sites (with all_sites every site), marked
// observed or never reached when marks are given, and a summary per module.
void print_sites(const std::vector<Module> &modules, bool all_sites,
                 const SiteMarks *marks);
// Prints the vDSO functions a run called and its calls at no scanned site.
void print_calls_seen(const SiteMarks &marks);

// Why a static executable's sites have the origins they have, or "".
[[nodiscard]] std::string attribution_note(const decoder::FileSites &file);

} // namespace cmc::app
