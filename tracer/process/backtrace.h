#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/frame.h"
#include "util/result.h"

struct Dwfl;
struct unw_addr_space;

namespace cmc::tracer {

// A symbolizer and unwinder for one traced process, built once per process
// (again after an exec) and reused for every stop. It reads the target's
// registers and memory through ptrace, so the target must be stopped by
// this thread's ptrace for attach and for every unwind.
class Backtracer {
public:
  // Fails when pid is not a ptrace-stopped tracee of the calling thread, or
  // when its mappings cannot be read.
  [[nodiscard]] static Result<Backtracer> attach(pid_t pid);

  Backtracer(Backtracer &&) noexcept = default;
  Backtracer &operator=(Backtracer &&) noexcept = default;
  Backtracer(const Backtracer &) = delete;
  Backtracer &operator=(const Backtracer &) = delete;
  ~Backtracer() = default;

  // The frames of the target's current stop, at most max_frames. A frame
  // without unwind information ends the stack early; only the registers
  // of the first frame failing to read is an error.
  [[nodiscard]] Result<std::vector<executor::Frame>>
  unwind(std::size_t max_frames = 32);
  // The same for a stop at the start of a function that has pushed
  // nothing (a patched vDSO stub: mov, syscall, ret): its frame, then the
  // stack as seen from the return address at stack_pointer (the target's
  // own unwind tables describe the unpatched code, which pushes).
  [[nodiscard]] Result<std::vector<executor::Frame>>
  unwind_from_entry(std::uint64_t pc, std::uint64_t stack_pointer,
                    std::size_t max_frames = 32);

  // Names the function, module and source line at pc; exact is false for a
  // return address, which is looked up at pc - 1 (inside the call).
  [[nodiscard]] executor::Frame symbolize(std::uint64_t pc, bool exact);

private:
  struct DwflCloser {
    void operator()(Dwfl *dwfl) const;
  };
  struct AddressSpaceCloser {
    void operator()(unw_addr_space *space) const;
  };
  struct UptCloser {
    void operator()(void *info) const;
  };
  Backtracer(pid_t pid, std::unique_ptr<Dwfl, DwflCloser> dwfl);
  // Unwinds in space; the first pc is exact (where the target stopped) or
  // a return address.
  [[nodiscard]] Result<std::vector<executor::Frame>>
  walk(unw_addr_space *space, std::size_t max_frames, bool exact_first);
  // Reads /proc/PID/maps again, for libraries mapped after attach.
  [[nodiscard]] Result<void> report_modules();

  pid_t pid_;
  std::unique_ptr<Dwfl, DwflCloser> dwfl_;
  std::unique_ptr<unw_addr_space, AddressSpaceCloser> space_;
  // The same accessors, but the first frame's rip and rsp as overridden
  // for unwind_from_entry.
  std::unique_ptr<unw_addr_space, AddressSpaceCloser> entry_space_;
  std::unique_ptr<void, UptCloser> upt_;
  bool refreshed_ = false; // modules re-read during the current unwind
};

} // namespace cmc::tracer
