#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"

namespace cmc::decoder {

// What a call of a patched vDSO function does.
enum class VdsoStub : std::uint8_t {
  kSyscall, // makes the system call of the same name, which seccomp stops
  kEnosys,  // returns -ENOSYS at once (vDSO getrandom: callers fall back to
            // the getrandom system call)
  kTrap,    // ud2: a function cmc does not know stops the check when called
};

// One exported function of the vDSO and the code cmc writes over its entry.
struct VdsoFunction {
  std::string name;         // "__vdso_clock_gettime"
  std::uint64_t offset = 0; // from the start of the vDSO image
  std::uint64_t size = 0;
  VdsoStub stub = VdsoStub::kTrap;
  long syscall = -1; // kSyscall: the number the stub loads into eax
  std::vector<std::byte> patch{};
  // The offset of the patch's syscall instruction, if it has one.
  std::optional<std::uint64_t> syscall_offset{};
  std::string first_instruction{}; // the original, as Capstone decodes it
};

// Every exported function of the vDSO image (the ELF the kernel maps as
// [vdso], read from a process), with the stub that replaces its entry.
// Fails when a function is too short for its stub or its first
// instructions do not decode: patching it would not be safe.
[[nodiscard]] Result<std::vector<VdsoFunction>>
plan_vdso_patches(std::span<const std::byte> image);

} // namespace cmc::decoder
