#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "decoder/syscall_format.h"
#include "tracer/process/backtrace.h"
#include "tracer/syscalls/syscall_watcher.h"

namespace cmc::tracer {

// One system call of the target, as a replay shows it.
struct TracedCall {
  long number = -1; // x86-64
  // Its name, arguments and result as shown; parts.text() is the line
  // "write(4, \"OK\\n\", 3) = 3".
  decoder::FormattedCall parts;
  std::uint64_t site = 0;    // the instruction's address
  std::string vdso_function; // the patched vDSO function it came from, or ""
  std::vector<executor::Frame>
      backtrace; // with backtraces: the stack at its entry
};

// Records every call the filter stops with its result, optionally with
// the user stack at its entry (libunwind + libdwfl).
class SyscallTrace final : public SyscallWatcher {
public:
  explicit SyscallTrace(bool backtraces, decoder::FormatOptions format = {})
      : backtraces_(backtraces), format_(format) {}

  [[nodiscard]] Result<void> entered(const ProcessAccess &tracee,
                                     const VdsoLayout &vdso,
                                     const Registers &regs) override;
  void ended_in_call(const ProcessAccess &tracee) override;
  [[nodiscard]] Result<void> returned(const ProcessAccess &tracee,
                                      const Registers &regs) override;
  [[nodiscard]] bool wants_results() const override { return true; }
  void new_program() override { backtracer_.reset(); }
  // For a new run: forgets every call.
  void reset();

  // The calls that returned since the last take, in order.
  [[nodiscard]] std::vector<TracedCall> take();
  // The call the target is in and has not returned from (the one a
  // quiescent target waits in: its main thread's, when that has one),
  // formatted without its result.
  [[nodiscard]] std::optional<TracedCall>
  pending(const ProcessAccess &tracee) const;

private:
  struct Entry {
    long number = 0;
    std::array<std::uint64_t, 6> args{};
    TracedCall call;
  };

  bool backtraces_;
  decoder::FormatOptions format_;
  std::optional<Backtracer> backtracer_;
  // The call each thread entered last and has not returned from.
  std::map<pid_t, Entry> entered_;
  std::vector<TracedCall> calls_;
};

} // namespace cmc::tracer
