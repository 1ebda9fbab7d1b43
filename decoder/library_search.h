#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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

// The system's static C library: libc.a beside the libc.so.6 that
// find_library resolves (also under /usr, where /lib is not merged into
// it), else in a default directory.
[[nodiscard]] std::optional<std::string> find_static_libc();

// The functions that a static library (an ar archive of relocatable
// objects, such as libc.a) defines, to tell its code inside a statically
// linked executable: the linker copies a member's function whole, so the
// executable's .symtab has it under the same name with the same size.
class StaticLibrary {
public:
  // Reads the .symtab of every member; fails for a missing file or one
  // that is not an archive.
  [[nodiscard]] static Result<StaticLibrary> open(const std::string &path);

  [[nodiscard]] const std::string &path() const { return path_; }
  // Whether a member defines a function symbol, local or global, of this
  // name and size.
  [[nodiscard]] bool defines(const Symbol &function) const;

private:
  std::string path_;
  std::set<std::pair<std::string, std::uint64_t>> functions_;
};

} // namespace cmc::decoder
