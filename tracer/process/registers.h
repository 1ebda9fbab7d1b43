#pragma once

#include <sys/user.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "tracer/process/remote_ptr.h"
#include "util/check.h"

namespace cmc::tracer {

// A thread's general-purpose registers (PTRACE_GETREGS), named by what
// they hold at its stops. On x86-64 a system call takes its number in rax
// and its arguments in rdi, rsi, rdx, r10, r8 and r9, and returns its
// result in rax; from its entry on, the kernel keeps the number in
// orig_rax (rax holds -ENOSYS until the call returns). At the call's
// stops rip is past its instruction: syscall, sysenter and int 0x80 are
// 2 bytes.
class Registers {
public:
  Registers() = default;
  explicit Registers(const user_regs_struct &raw) : raw_(raw) {}

  // Every register, for ptrace and a process image.
  [[nodiscard]] const user_regs_struct &raw() const { return raw_; }

  // The number of the call entered (orig_rax).
  [[nodiscard]] long syscall_number() const {
    return static_cast<long>(raw_.orig_rax);
  }
  // At a syscall-entry stop the kernel reads the number again when the
  // thread resumes: another call runs in its place, and -1 skips it.
  void set_syscall_number(long number) {
    raw_.orig_rax = static_cast<std::uint64_t>(number);
  }
  // Argument index (0 to 5) of the call.
  [[nodiscard]] std::uint64_t arg(std::size_t index) const {
    return raw_.*argument(index);
  }
  void set_arg(std::size_t index, std::uint64_t value) {
    raw_.*argument(index) = value;
  }
  // Argument index as the address of a T in the target.
  template <typename T>
  [[nodiscard]] RemotePtr<T> arg_ptr(std::size_t index) const {
    return RemotePtr<T>(arg(index));
  }
  [[nodiscard]] std::array<std::uint64_t, 6> args() const {
    return {arg(0), arg(1), arg(2), arg(3), arg(4), arg(5)};
  }
  // The call's result, -errno on failure (rax).
  [[nodiscard]] long result() const { return static_cast<long>(raw_.rax); }
  void set_result(long result) {
    raw_.rax = static_cast<std::uint64_t>(result);
  }

  // At a stop in a system call: the address of its instruction.
  [[nodiscard]] std::uint64_t syscall_site() const {
    return raw_.rip - kSyscallLength;
  }
  // Makes the thread, once resumed, enter call number on the syscall
  // instruction at site: rip there, the number in rax, where the
  // instruction takes it.
  void set_to_enter(std::uint64_t site, long number) {
    raw_.rip = site;
    raw_.rax = static_cast<std::uint64_t>(number);
  }

  // What rdtsc returns: the time-stamp counter in edx:eax.
  void set_tsc(std::uint64_t tsc) {
    raw_.rax = tsc & 0xffffffff;
    raw_.rdx = tsc >> 32;
  }
  // What rdtscp returns besides: IA32_TSC_AUX in ecx.
  void set_tsc_aux(std::uint32_t aux) { raw_.rcx = aux; }
  // What cpuid reads: the leaf in eax and the subleaf in ecx.
  [[nodiscard]] std::uint32_t cpuid_leaf() const {
    return static_cast<std::uint32_t>(raw_.rax);
  }
  [[nodiscard]] std::uint32_t cpuid_subleaf() const {
    return static_cast<std::uint32_t>(raw_.rcx);
  }
  // What cpuid returns: eax, ebx, ecx and edx, zero-extended.
  void set_cpuid(const std::array<std::uint32_t, 4> &out) {
    raw_.rax = out[0];
    raw_.rbx = out[1];
    raw_.rcx = out[2];
    raw_.rdx = out[3];
  }

  [[nodiscard]] std::uint64_t ip() const { return raw_.rip; }
  void set_ip(std::uint64_t ip) { raw_.rip = ip; }
  [[nodiscard]] std::uint64_t sp() const { return raw_.rsp; }
  void set_sp(std::uint64_t sp) { raw_.rsp = sp; }
  [[nodiscard]] std::uint64_t frame_pointer() const { return raw_.rbp; }

private:
  static constexpr std::uint64_t kSyscallLength = 2;
  using Field = decltype(user_regs_struct::rdi) user_regs_struct::*;
  // The register of argument index.
  static Field argument(std::size_t index) {
    static constexpr std::array<Field, 6> kArguments{
        &user_regs_struct::rdi, &user_regs_struct::rsi, &user_regs_struct::rdx,
        &user_regs_struct::r10, &user_regs_struct::r8,  &user_regs_struct::r9};
    CMC_CHECK(index < kArguments.size(), "a system call has six arguments");
    return kArguments[index];
  }

  user_regs_struct raw_{};
};

} // namespace cmc::tracer
