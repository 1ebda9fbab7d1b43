#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "decoder/vdso.h"
#include "tracer/process/process_access.h"
#include "util/result.h"

namespace cmc::tracer {

// A range of the target's addresses, [start, end).
struct AddressRange {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  [[nodiscard]] bool contains(std::uint64_t address) const {
    return address >= start && address < end;
  }
};

// The target's vDSO after cmc took control of it: every exported function
// patched (decoder/vdso.h) and the kernel's clock pages ([vvar],
// [vvar_vclock]) made inaccessible, so a time read that escapes the patches
// faults instead of returning real time.
class VdsoLayout {
public:
  VdsoLayout() = default;
  VdsoLayout(AddressRange vdso, std::vector<AddressRange> clock_pages,
             std::shared_ptr<const std::vector<decoder::VdsoFunction>> plan)
      : vdso_(vdso), clock_pages_(std::move(clock_pages)),
        plan_(std::move(plan)) {}

  [[nodiscard]] bool in_vdso(std::uint64_t address) const {
    return vdso_.contains(address);
  }
  [[nodiscard]] bool in_clock_pages(std::uint64_t address) const;
  // The patched function whose code holds address, or nullptr.
  [[nodiscard]] const decoder::VdsoFunction *
  function_at(std::uint64_t address) const;

private:
  AddressRange vdso_;
  std::vector<AddressRange> clock_pages_;
  std::shared_ptr<const std::vector<decoder::VdsoFunction>> plan_;
};

// Patches the vDSO of a target stopped at its exec (before its first
// instruction) and protects its clock pages. vdso_base is AT_SYSINFO_EHDR.
[[nodiscard]] Result<VdsoLayout> control_vdso(ProcessAccess &tracee,
                                              std::uint64_t vdso_base);

} // namespace cmc::tracer
