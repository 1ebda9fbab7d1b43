#include "tracer/syscalls/syscall_trace.h"

#include "tracer/syscalls/syscall_table.h"

namespace cmc::tracer {
namespace {

decoder::MemoryReader reader_of(const ProcessAccess &tracee) {
  return [&tracee](std::uint64_t address, std::size_t length) {
    // A buffer may run off the end of its mapping: halve it until the
    // prefix reads.
    std::string bytes(length, '\0');
    while (!bytes.empty()) {
      const iovec remote{reinterpret_cast<void *>(address), bytes.size()};
      if (tracee
              .read(std::span(&remote, 1),
                    std::as_writable_bytes(std::span(bytes)))
              .ok())
        return bytes;
      bytes.resize(bytes.size() / 2);
    }
    return bytes;
  };
}

// Sets call's parts.
void set_text(TracedCall &call, const ProcessAccess &tracee,
              const std::array<std::uint64_t, 6> &args,
              std::optional<long> result,
              const decoder::FormatOptions &format) {
  call.parts =
      format_call(call.number, args, result, reader_of(tracee), format);
}

} // namespace

Result<void> SyscallTrace::entered(const ProcessAccess &tracee,
                                   const VdsoLayout &vdso,
                                   const Registers &regs) {
  Entry entry;
  entry.number = regs.syscall_number();
  entry.call.number = entry.number;
  entry.args = regs.args();
  entry.call.site = regs.syscall_site();
  if (const auto *function = vdso.function_at(entry.call.site))
    entry.call.vdso_function = function->name;
  if (backtraces_) {
    if (!backtracer_) {
      auto attached = Backtracer::attach(tracee.pid());
      if (!attached)
        return attached.error();
      backtracer_ = std::move(*attached);
    }
    // A patched vDSO stub pushes nothing: its unwind tables, written for
    // the code it replaced, do not describe it.
    auto frames =
        entry.call.vdso_function.empty()
            ? backtracer_->unwind()
            : backtracer_->unwind_from_entry(entry.call.site, regs.sp());
    if (!frames)
      return frames.error();
    entry.call.backtrace = std::move(*frames);
  }
  entered_[tracee.focused()] = std::move(entry);
  return {};
}

Result<void> SyscallTrace::returned(const ProcessAccess &tracee,
                                    const Registers &regs) {
  const auto entered = entered_.find(tracee.focused());
  if (entered == entered_.end())
    return {};
  Entry entry = std::move(entered->second);
  entered_.erase(entered);
  set_text(entry.call, tracee, entry.args, regs.result(), format_);
  calls_.push_back(std::move(entry.call));
  return {};
}

void SyscallTrace::ended_in_call(const ProcessAccess &tracee) {
  const auto entered = entered_.find(tracee.focused());
  if (entered == entered_.end())
    return;
  TracedCall call = std::move(entered->second.call);
  set_text(call, tracee, entered->second.args, std::nullopt, format_);
  calls_.push_back(std::move(call));
  entered_.erase(entered);
}

void SyscallTrace::reset() {
  backtracer_.reset();
  entered_.clear();
  calls_.clear();
}

std::vector<TracedCall> SyscallTrace::take() {
  std::vector<TracedCall> calls;
  calls.swap(calls_);
  return calls;
}

std::optional<TracedCall>
SyscallTrace::pending(const ProcessAccess &tracee) const {
  if (entered_.empty())
    return std::nullopt;
  const auto main = entered_.find(tracee.pid());
  const Entry &entry =
      main != entered_.end() ? main->second : entered_.begin()->second;
  TracedCall call = entry.call;
  set_text(call, tracee, entry.args, std::nullopt, format_);
  return call;
}

} // namespace cmc::tracer
