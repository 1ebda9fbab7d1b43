#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cmc::decoder {

// One line of /proc/PID/maps.
struct Mapping {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::string perms; // "r-xp"
  std::uint64_t offset = 0;
  std::uint32_t dev_major = 0;
  std::uint32_t dev_minor = 0;
  std::uint64_t inode = 0;
  std::string path; // may end in " (deleted)"; empty for anonymous memory
};

// The mapping of maps (sorted by address, as /proc/PID/maps lists them)
// that holds address, if any.
[[nodiscard]] const Mapping *mapping_holding(std::span<const Mapping> maps,
                                             std::uint64_t address);

// Parses the text of /proc/PID/maps.
[[nodiscard]] Result<std::vector<Mapping>> parse_maps(std::string_view text);

// Identity of a file as the kernel shows it in maps (from stat of
// /proc/PID/exe): the path in maps is resolved and may say " (deleted)".
struct FileId {
  std::uint32_t dev_major = 0;
  std::uint32_t dev_minor = 0;
  std::uint64_t inode = 0;
};

// The load bias of the executable: the start of its mapping at file offset
// 0 minus its link-time load base (ElfFile::load_base). Zero for ET_EXEC.
[[nodiscard]] Result<std::uint64_t> load_bias(std::span<const Mapping> maps,
                                              const FileId &exe,
                                              std::uint64_t load_base);

// True when every byte of [address, address + length) is mapped readable.
[[nodiscard]] bool readable(std::span<const Mapping> maps,
                            std::uint64_t address, std::uint64_t length);

} // namespace cmc::decoder
