#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>

#include "executor/sources.h"
#include "tracer/process/process_access.h"
#include "tracer/syscalls/syscall.h"
#include "tracer/time/cpu_model.h"
#include "tracer/time/signal_timers.h"
#include "tracer/time/timer_fds.h"
#include "tracer/time/tsc_patches.h"
#include "tracer/time/vdso_control.h"
#include "tracer/time/virtual_clock.h"
#include "util/result.h"

namespace cmc::tracer {

// The world outside its memory that the target sees and cmc decides: the
// virtual clock, random bytes from a seeded generator, the patched vDSO;
// and the record of which of these sources the target used. One per run:
// the same seed and steps give the same answers in the same order.
class Environment {
public:
  explicit Environment(std::uint64_t seed)
      : clock_(host_tsc_khz()), random_(seed) {}

  [[nodiscard]] VirtualClock &clock() { return clock_; }
  [[nodiscard]] const VirtualClock &clock() const { return clock_; }
  [[nodiscard]] const executor::Sources &sources() const { return sources_; }
  [[nodiscard]] const VdsoLayout &vdso() const { return vdso_; }
  [[nodiscard]] TimerFds &timers() { return timers_; }
  [[nodiscard]] const TimerFds &timers() const { return timers_; }
  [[nodiscard]] SignalTimers &signal_timers() { return signal_timers_; }
  [[nodiscard]] const SignalTimers &signal_timers() const {
    return signal_timers_;
  }

  // At the exec stop: overwrites AT_RANDOM, patches the vDSO, protects its
  // clock pages, patches the rdtsc sites mapped (ld.so's start-up timing
  // reads stay in its .bss, bytes of the whole process) and plants a
  // breakpoint at the program's entry point; scans the libraries ahead for
  // rdtsc (scan_tsc_ahead). Again at each later exec (a wrapper's), for
  // the new image.
  [[nodiscard]] Result<void> take_control(ProcessAccess &tracee);
  // At a SIGTRAP stop: answers a breakpoint of cmc's and returns true, or
  // returns false for another SIGTRAP. Until the entry, each rdtsc and
  // rdtscp site of the files mapped is patched with int3 (TscPatches) and
  // answered here. At the entry breakpoint, where PR_SET_TSC traps
  // (tsc_traps()), it is set and the sites get their instructions back, so
  // from then on the fault answers them (emulate_tsc); elsewhere the sites
  // stay patched, and those of files mapped later are patched too.
  [[nodiscard]] Result<bool> at_breakpoint(ProcessAccess &tracee);

  // Answers read(fd, buffer, count), or with at pread64(fd, buffer, count,
  // at), of /dev/urandom or /dev/random from the seed, and of the /proc
  // files that carry times from the virtual clock (proc_times.h); file is
  // the target's fd, duplicated. The result of the call, skipped; nothing
  // for another file (it runs).
  [[nodiscard]] Result<std::optional<long>>
  answer_read(ProcessAccess &tracee, const UniqueFd &file, std::uint64_t buffer,
              std::uint64_t count, std::optional<std::uint64_t> at);
  // At a SIGSEGV stop: emulates the rdtsc or rdtscp at rip (PR_SET_TSC
  // made it fault) and returns true, or returns false for another fault.
  [[nodiscard]] Result<bool> emulate_tsc(ProcessAccess &tracee);
  // At a SIGSEGV stop: answers the cpuid at rip (CPUID faulting made it
  // fault) with cpuid_answer() and returns true, or returns false for
  // another fault.
  [[nodiscard]] Result<bool> emulate_cpuid(ProcessAccess &tracee);

  // Records a source read by the system call whose stop has regs.
  void note(executor::Source source, const Registers &regs);
  void note(executor::Source source, executor::Via via) {
    sources_.note(source, via);
  }

  // Writes length bytes of the seeded generator at address.
  [[nodiscard]] Result<void> fill_random(ProcessAccess &tracee,
                                         std::uint64_t address,
                                         std::uint64_t length);
  [[nodiscard]] Result<void> at_entry(ProcessAccess &tracee, Registers regs);
  // ld.so's _dl_debug_state (a ret), called around every dlopen and
  // dlclose: patches the files mapped since.
  [[nodiscard]] Result<void> at_debug_state(ProcessAccess &tracee,
                                            Registers regs);
  // Answers the rdtsc (or rdtscp) of length bytes at regs.ip() from the
  // virtual clock and notes source.
  [[nodiscard]] Result<void> answer_tsc(ProcessAccess &tracee, Registers regs,
                                        std::uint8_t length, bool rdtscp,
                                        executor::Source source);

private:
  // Where it has not: notes the CPU-identity instructions of the files
  // patched (TscPatches::cpu_sites) as sources cmc does not control.
  void note_cpu_sites();
  // answer_read of a regular file, open at file (a duplicate of the
  // target's descriptor).
  [[nodiscard]] Result<std::optional<long>>
  proc_read(ProcessAccess &tracee, const UniqueFd &file, std::uint64_t buffer,
            std::uint64_t count, std::optional<std::uint64_t> at);

  VirtualClock clock_;
  std::mt19937_64 random_;
  VdsoLayout vdso_;
  TimerFds timers_;
  SignalTimers signal_timers_;
  executor::Sources sources_;
  // The planted entry breakpoint and the code it replaced.
  std::optional<std::uint64_t> entry_;
  std::array<std::byte, 2> entry_code_{};
  // Where PR_SET_TSC does not trap.
  TscPatches tsc_;
};

// The handlers of the calls cmc answers itself, from the virtual clock or
// the seed (the call never runs): their results are the kernel's for the
// same clock and bytes, EFAULT for an address the target cannot take.
[[nodiscard]] Result<Action> answer_clock_gettime(SeccompStop &stop);
[[nodiscard]] Result<Action> answer_gettimeofday(SeccompStop &stop);
[[nodiscard]] Result<Action> answer_time(SeccompStop &stop);
[[nodiscard]] Result<Action> answer_clock_getres(SeccompStop &stop);
[[nodiscard]] Result<Action> answer_getcpu(SeccompStop &stop);
// The target runs on CPU 0 only, whatever CPU cmc pinned it to, as getcpu
// and cpuid say: sched_getaffinity answers the set {0};
// sched_setaffinity succeeds for a set that has CPU 0 (the kernel keeps
// the CPUs of the set that are allowed) and fails with EINVAL for one that
// has not, as on a machine of one CPU; cmc's own pinning stays.
[[nodiscard]] Result<Action> answer_sched_getaffinity(SeccompStop &stop);
// Where cmc set CPUID faulting, the target cannot turn it off: its
// ARCH_GET_CPUID answers 1 (cpuid runs, as it would untraced) and its
// ARCH_SET_CPUID succeeds without effect (cmc answers every cpuid, with
// the same fixed CPU). Elsewhere the call runs.
[[nodiscard]] Result<Action> answer_arch_cpuid(SeccompStop &stop);
[[nodiscard]] Result<Action> answer_sched_setaffinity(SeccompStop &stop);
[[nodiscard]] Result<Action> answer_getrandom(SeccompStop &stop);

} // namespace cmc::tracer
