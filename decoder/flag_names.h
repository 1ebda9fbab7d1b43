#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace cmc::decoder {

// A constant of the kernel's ABI and the name strace shows for it.
struct Named {
  std::uint64_t value;
  std::string_view name;
};

// How the value of an argument of a flag-set or constant kind is named,
// as strace names it. The value is the low 32 bits of the register (every
// such argument is an int), in three parts:
//   choice  the bits of choice_mask name one of choices (O_RDONLY in
//           O_ACCMODE, MAP_PRIVATE in MAP_TYPE, SOCK_STREAM); no mask:
//           the whole value is one of choices (AF_INET, EPOLL_CTL_ADD);
//   flags   the other bits, each of flags that is wholly set, in the
//           order of the table (so O_SYNC before the O_DSYNC it contains);
//   rest    the bits no name covers, in hex ("PROT_READ|0x100").
// A value of no choice and no flag is zero (named by zero, else "0"), or
// an unnamed choice: a decimal number when decimal, else hex.
struct ValueNames {
  std::string_view kind; // the shape's name of it: "prot" in "{prot}"
  std::span<const Named> choices;
  std::uint64_t choice_mask = 0;
  std::span<const Named> flags;
  std::string_view zero;
  bool decimal = false;
};

// The value as strace shows it: "PROT_READ|PROT_WRITE", "AF_INET",
// "O_RDWR|O_CLOEXEC", "AT_FDCWD", "PROT_READ|0x100".
[[nodiscard]] std::string name_value(const ValueNames &names,
                                     std::uint64_t value);

// The table of a shape's kind name ("prot", "map", "open"...), or nullptr.
[[nodiscard]] const ValueNames *value_names(std::string_view kind);

} // namespace cmc::decoder
