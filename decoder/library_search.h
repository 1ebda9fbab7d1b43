#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/elf_file.h"
#include "util/result.h"

namespace cmc::decoder {

// The directories and names of /etc/ld.so.cache (the "glibc-ld.so.cache1.1"
// format), parsed from its bytes: name -> path, in cache order.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
parse_ld_so_cache(std::string_view bytes);

// Finds the file of a DT_NEEDED name as ld.so does for x86-64: a name with a
// slash as is; else the RUNPATH/RPATH directories ($ORIGIN expanded), then
// /etc/ld.so.cache, then the default directories.
[[nodiscard]] std::optional<std::string>
find_library(const std::string &name, const std::vector<std::string> &run_paths,
             const std::string &origin);

// The executable's shared libraries, DT_NEEDED followed breadth-first, each
// once, and the interpreter; unresolved names are an error.
[[nodiscard]] Result<std::vector<std::string>>
loaded_libraries(const ElfFile &executable);

} // namespace cmc::decoder
