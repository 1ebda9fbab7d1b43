#pragma once

#include <linux/filter.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoder/syscall_format.h"
#include "tracer/process/tracee.h"
#include "tracer/syscalls/syscall.h"
#include "util/result.h"

namespace cmc::tracer {

// The rows of real calls, in a fixed order: a row's index is the
// SECCOMP_RET_DATA of its filter rule.
[[nodiscard]] std::span<const Syscall> syscalls();

// The row a seccomp stop's SECCOMP_RET_DATA names, or nullptr. Besides the
// calls' rows: the one of any call not in the table under
// observing_program, and the one of a call of a foreign ABI.
[[nodiscard]] const Syscall *syscall_at(unsigned long data);

// The row of the x86-64 call number, or nullptr.
[[nodiscard]] const Syscall *syscall_of(long number);

// The call as strace shows it (decoder::format_syscall), with its row's
// shape; and the same in parts (decoder::format_call).
[[nodiscard]] std::string
format_syscall(long number, const std::array<std::uint64_t, 6> &args,
               std::optional<long> result, const decoder::MemoryReader &read,
               const decoder::FormatOptions &options = {});
[[nodiscard]] decoder::FormattedCall
format_call(long number, const std::array<std::uint64_t, 6> &args,
            std::optional<long> result, const decoder::MemoryReader &read,
            const decoder::FormatOptions &options = {});

// Which calls a trace shows, as strace's -e trace=SET says: a comma list
// of call names (any x86-64 call) and classes (%file, %desc, %network,
// %memory, %process, %signal: of the table's rows), "all" or "none", the
// whole list negated by a leading "!".
class TraceFilter {
public:
  // Every call.
  TraceFilter() = default;
  // The filter of a list, or the error naming the word that is none of
  // the above.
  [[nodiscard]] static Result<TraceFilter> parse(std::string_view list);

  [[nodiscard]] bool shows(long number) const;

private:
  std::vector<long> numbers_; // sorted
  bool negated_ = true;       // numbers_ are the calls not shown
};

// The BPF program, built once with libseccomp: every syscall runs freely
// except the rows with a handler, which stop the target for cmc.
[[nodiscard]] const sock_fprog &seccomp_program();

// The same rules over a default of stopping on every other system call
// too (the row of any other call), so a run records every call site. The
// launch's own execve (made before cmc can set PTRACE_O_TRACESECCOMP, when
// a traced call would fail with ENOSYS) is allowed, as is its write of a
// failure report to report_fd: the target's execve calls are not observed
// at their sites.
[[nodiscard]] std::vector<sock_filter> observing_program(int report_fd);

// The filter for Tracee::spawn: seccomp_program(), or with observe (a
// LaunchSpec's) observing_program.
[[nodiscard]] SeccompFilter seccomp_filter(bool observe);

} // namespace cmc::tracer
