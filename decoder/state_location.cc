#include "decoder/state_location.h"

#include <sys/user.h>

#include <array>

#include <fmt/format.h>

namespace cmc::decoder {

std::span<const std::string_view> register_names() {
  static constexpr std::array<std::string_view, 27> kNames = {
      "r15",     "r14",      "r13", "r12", "rbp",    "rbx", "r11",
      "r10",     "r9",       "r8",  "rax", "rcx",    "rdx", "rsi",
      "rdi",     "orig_rax", "rip", "cs",  "eflags", "rsp", "ss",
      "fs_base", "gs_base",  "ds",  "es",  "fs",     "gs"};
  static_assert(kNames.size() * 8 == sizeof(user_regs_struct));
  return kNames;
}

std::string Location::describe() const {
  if (piece.starts_with("registers of thread") &&
      offset / 8 < register_names().size())
    return offset % 8 == 0
               ? fmt::format("{}+{}", piece, register_names()[offset / 8])
               : fmt::format("{}+{}+{}", piece, register_names()[offset / 8],
                             offset % 8);
  if (piece.starts_with("fd ") && offset < 24 && offset % 8 == 0) {
    static constexpr std::array<std::string_view, 3> kFields = {
        "flags", "position", "client"};
    return fmt::format("{} {}", piece, kFields[offset / 8]);
  }
  if (piece.starts_with("heap chunk") || piece.starts_with("stack of") ||
      piece.starts_with("registers of") || piece.starts_with("fd "))
    return fmt::format("{}+{}", piece, offset);
  return fmt::format("{}+{:#x}", piece, offset);
}

} // namespace cmc::decoder
