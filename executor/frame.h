#pragma once

#include <cstdint>
#include <string>

namespace cmc::executor {

// One frame of a target's user stack, innermost first.
struct Frame {
  std::uint64_t pc = 0;
  std::string function{};   // "" when no symbol covers pc
  std::uint64_t offset = 0; // pc - function start, 0 if unknown
  std::string module{};     // file path of the mapping, "" if none
  std::string file{};       // source location when debug info exists
  int line = 0;
};

// "main+0x1c (kv.c:88)", or "?? 0x7f0012345678 (libc.so.6)".
[[nodiscard]] std::string describe(const Frame &frame);

} // namespace cmc::executor
