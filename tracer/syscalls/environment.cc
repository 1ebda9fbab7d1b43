#include "tracer/syscalls/environment.h"

#include <asm/prctl.h>
#include <elf.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "decoder/auxv.h"
#include "tracer/syscalls/proc_times.h"

namespace cmc::tracer {

using executor::Source;
using executor::Via;
namespace {

// Writes value where ptr points unless it is null; false if the target
// cannot take it (the call then fails with EFAULT).
template <typename T>
bool put(ProcessAccess &tracee, RemotePtr<T> ptr, const T &value) {
  return ptr.is_null() || tracee.write(ptr, value).ok();
}

constexpr long kFault = -EFAULT;

// Where the CPU has CPUID faulting: turns it on in the target, at the
// exec stop (the kernel turns it off at every execve), before ld.so reads
// the CPU's features to pick its string functions.
Result<void> trap_cpuid(ProcessAccess &tracee) {
  if (!cpuid_faults())
    return {};
  auto regs = tracee.registers();
  if (!regs)
    return regs.error();
  // The arch_prctl runs on a syscall instruction written for it over the
  // two bytes at rip (ld.so's entry, or a static program's).
  const std::uint64_t at = regs->ip();
  std::array<std::byte, 2> code{};
  const iovec remote{reinterpret_cast<void *>(at), code.size()};
  if (auto read = tracee.read(std::span(&remote, 1), code); !read)
    return Error{"cannot read the target's code at its entry: " +
                 read.error().message};
  if (auto written =
          tracee.patch_code(at, std::array{std::byte{0x0f}, std::byte{0x05}});
      !written)
    return written;
  auto trapped =
      tracee.inject_syscall(at, SYS_arch_prctl, {ARCH_SET_CPUID, 0, 0});
  if (!trapped)
    return trapped.error();
  if (auto restored = tracee.patch_code(at, code); !restored)
    return restored;
  if (*trapped != 0)
    return system_error("cannot trap the target's cpuid (ARCH_SET_CPUID)",
                        static_cast<int>(-*trapped));
  return {};
}

} // namespace

Result<void> Environment::take_control(ProcessAccess &tracee) {
  // After a wrapper's exec: its image, with cmc's patches and its entry's
  // breakpoint, is gone. PR_SET_TSC, set at its entry, stays set across
  // execve (CPUID faulting does not): the new image's rdtsc fault from
  // its first instruction on, and emulate_tsc answers them.
  tsc_.forget();
  entry_.reset();
  if (auto trapped = trap_cpuid(tracee); !trapped)
    return trapped;
  auto raw = tracee.proc_file("auxv");
  if (!raw)
    return raw.error();
  const auto auxv = std::as_bytes(std::span(*raw));
  if (const auto random = decoder::auxv_value(auxv, AT_RANDOM)) {
    if (auto filled = fill_random(tracee, *random, 16); !filled)
      return filled.error();
    note(Source::kAtRandom, Via::kOther);
  }
  if (const auto base = decoder::auxv_value(auxv, AT_SYSINFO_EHDR)) {
    auto layout = control_vdso(tracee, *base);
    if (!layout)
      return layout.error();
    vdso_ = std::move(*layout);
  }
  // The libraries ld.so maps are patched before the entry on any CPU (at
  // _dl_debug_state): scanned now, outside the step's timeout (libc takes
  // ~0.2 s, several times that in a sanitizer build).
  {
    std::error_code error;
    const auto exe = std::filesystem::read_symlink(
        fmt::format("/proc/{}/exe", tracee.pid()), error);
    if (!error)
      scan_tsc_ahead(exe);
  }
  // ld.so reads the TSC before the entry, where the prctl or the
  // libraries' patches take effect: its load and relocation times stay in
  // its .bss, bytes of the whole-process state. Its sites (and the
  // program's) are patched now.
  if (auto patched = tsc_.patch_mapped(tracee); !patched)
    return patched;
  note_cpu_sites();
  const auto entry = decoder::auxv_value(auxv, AT_ENTRY);
  if (!entry)
    return Error{"the target's auxiliary vector has no AT_ENTRY"};
  const iovec remote{reinterpret_cast<void *>(*entry), entry_code_.size()};
  if (auto read = tracee.read(std::span(&remote, 1), entry_code_); !read)
    return Error{"cannot read the target's entry point: " +
                 read.error().message};
  if (auto planted = tracee.patch_code(*entry, std::array{std::byte{0xcc}});
      !planted)
    return planted.error();
  entry_ = *entry;
  return {};
}

Result<bool> Environment::at_breakpoint(ProcessAccess &tracee) {
  auto regs = tracee.registers();
  if (!regs)
    return regs.error();
  // rip is past the one-byte int3.
  const std::uint64_t at = regs->ip() - 1;
  if (entry_ && at == *entry_) {
    if (auto entered = at_entry(tracee, *regs); !entered)
      return entered.error();
    return true;
  }
  if (const decoder::TscSite *site = tsc_.site_at(at)) {
    regs->set_ip(at);
    // Where PR_SET_TSC traps, sites are patched only until the entry.
    const Source source =
        tsc_traps() ? Source::kRdtscBeforeEntry : Source::kRdtscPatched;
    if (auto answered =
            answer_tsc(tracee, *regs, site->length, site->rdtscp, source);
        !answered)
      return answered.error();
    return true;
  }
  if (tsc_.debug_state_at(at)) {
    if (auto patched = at_debug_state(tracee, *regs); !patched)
      return patched.error();
    return true;
  }
  return false;
}

Result<void> Environment::at_entry(ProcessAccess &tracee, Registers regs) {
  const std::uint64_t entry = *entry_;
  entry_.reset();
  regs.set_ip(entry);
  if (!tsc_traps()) {
    if (auto restored = tracee.patch_code(entry, entry_code_); !restored)
      return restored;
    if (auto patched = tsc_.patch_mapped(tracee); !patched)
      return patched;
    note_cpu_sites();
    if (!tsc_.unscanned().empty())
      note(Source::kRdtscUncontrolled, Via::kOther);
    return tracee.set_registers(regs);
  }
  // The prctl runs on a syscall instruction written over the entry for it.
  if (auto written = tracee.patch_code(
          entry, std::array{std::byte{0x0f}, std::byte{0x05}});
      !written)
    return written;
  auto trapped =
      tracee.inject_syscall(entry, SYS_prctl, {PR_SET_TSC, PR_TSC_SIGSEGV, 0});
  if (!trapped)
    return trapped.error();
  if (*trapped != 0)
    return system_error("cannot trap the target's rdtsc (PR_SET_TSC)",
                        static_cast<int>(-*trapped));
  if (auto restored = tracee.patch_code(entry, entry_code_); !restored)
    return restored;
  // From here every rdtsc faults: the sites patched for ld.so and the
  // constructors get their instructions back, so the fault answers them.
  if (auto unpatched = tsc_.unpatch_all(tracee); !unpatched)
    return unpatched;
  return tracee.set_registers(regs);
}

Result<void> Environment::at_debug_state(ProcessAccess &tracee,
                                         Registers regs) {
  // Returns for it, as its ret would.
  auto back = tracee.read(RemotePtr<std::uint64_t>(regs.sp()));
  if (!back)
    return back.error();
  regs.set_ip(*back);
  regs.set_sp(regs.sp() + sizeof *back);
  if (auto patched = tsc_.patch_mapped(tracee); !patched)
    return patched;
  note_cpu_sites();
  if (!tsc_.unscanned().empty())
    note(Source::kRdtscUncontrolled, Via::kOther);
  return tracee.set_registers(regs);
}

void Environment::note_cpu_sites() {
  if (cpuid_faults())
    return;
  for (const auto &[instruction, site] : tsc_.cpu_sites()) {
    Source source = Source::kRdrand;
    if (instruction == decoder::CpuInstruction::kCpuid)
      source = Source::kCpuidNative;
    else if (instruction == decoder::CpuInstruction::kRdpid)
      source = Source::kRdpid;
    sources_.note_site(
        source,
        fmt::format("{} {}", decoder::instruction_name(instruction), site));
  }
}

void Environment::note(Source source, const Registers &regs) {
  note(source, vdso_.in_vdso(regs.syscall_site()) ? Via::kVdso : Via::kSyscall);
}

Result<void> Environment::fill_random(ProcessAccess &tracee,
                                      std::uint64_t address,
                                      std::uint64_t length) {
  std::array<std::byte, 4096> chunk{};
  for (std::uint64_t done = 0; done < length; done += chunk.size()) {
    const std::size_t size =
        std::min<std::uint64_t>(chunk.size(), length - done);
    for (std::size_t i = 0; i < size; i += 8) {
      const std::uint64_t word = random_();
      std::memcpy(&chunk[i], &word, std::min<std::size_t>(8, size - i));
    }
    if (auto written =
            tracee.write(address + done, std::span(chunk).first(size));
        !written)
      return written.error();
  }
  return {};
}

Result<std::optional<long>>
Environment::answer_read(ProcessAccess &tracee, const UniqueFd &file,
                         std::uint64_t buffer, std::uint64_t count,
                         std::optional<std::uint64_t> at) {
  struct stat info {};
  if (fstat(file.get(), &info) != 0)
    return std::optional<long>();
  if (S_ISREG(info.st_mode))
    return proc_read(tracee, file, buffer, count, at);
  if (!S_ISCHR(info.st_mode) || major(info.st_rdev) != 1 ||
      (minor(info.st_rdev) != 8 && minor(info.st_rdev) != 9))
    return std::optional<long>();
  note(Source::kDevRandom, Via::kSyscall);
  const std::uint64_t length =
      std::min<std::uint64_t>(count, std::uint64_t{32} << 20);
  if (auto filled = fill_random(tracee, buffer, length); !filled)
    return std::optional<long>(kFault);
  return std::optional(static_cast<long>(length));
}

Result<std::optional<long>>
Environment::proc_read(ProcessAccess &tracee, const UniqueFd &file,
                       std::uint64_t buffer, std::uint64_t count,
                       std::optional<std::uint64_t> at) {
  const std::optional<ProcTimes> kind = proc_times_of_fd(file);
  if (!kind)
    return std::optional<long>();
  if (*kind == ProcTimes::kOther) {
    note(Source::kProcOther, Via::kSyscall);
    return std::optional<long>();
  }
  note(*kind == ProcTimes::kTaskStat ? Source::kProcTaskStat
                                     : Source::kProcClock,
       Via::kSyscall);
  // Only the files whose other fields stay are read.
  const bool keeps = *kind == ProcTimes::kStat || *kind == ProcTimes::kTaskStat;
  const std::string text =
      virtual_proc_text(*kind, keeps ? whole_text(file) : "", clock_);
  // The offset is the open file's, shared with the target's descriptor:
  // read() moves it as the kernel would.
  const off_t offset =
      at ? static_cast<off_t>(*at) : lseek(file.get(), 0, SEEK_CUR);
  if (offset < 0)
    return std::optional<long>(-EINVAL);
  const std::size_t from =
      std::min(static_cast<std::size_t>(offset), text.size());
  const std::size_t length = std::min<std::uint64_t>(count, text.size() - from);
  if (length > 0 && !tracee.write(buffer, std::as_bytes(std::span(text).subspan(
                                              from, length))))
    return std::optional<long>(kFault);
  if (!at)
    lseek(file.get(), offset + static_cast<off_t>(length), SEEK_SET);
  return std::optional(static_cast<long>(length));
}

Result<bool> Environment::emulate_tsc(ProcessAccess &tracee) {
  auto regs = tracee.registers();
  if (!regs)
    return regs.error();
  std::array<std::uint8_t, 3> code{};
  const iovec remote{reinterpret_cast<void *>(regs->ip()), code.size()};
  if (!tracee.read(std::span(&remote, 1),
                   std::as_writable_bytes(std::span(code))))
    return false;
  const bool rdtsc = code[0] == 0x0f && code[1] == 0x31;
  const bool rdtscp = code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9;
  if (!rdtsc && !rdtscp)
    return false;
  if (auto answered =
          answer_tsc(tracee, *regs, rdtsc ? 2 : 3, rdtscp, Source::kRdtsc);
      !answered)
    return answered.error();
  return true;
}

Result<bool> Environment::emulate_cpuid(ProcessAccess &tracee) {
  if (!cpuid_faults())
    return false;
  auto regs = tracee.registers();
  if (!regs)
    return regs.error();
  std::array<std::uint8_t, 2> code{};
  const iovec remote{reinterpret_cast<void *>(regs->ip()), code.size()};
  if (!tracee.read(std::span(&remote, 1),
                   std::as_writable_bytes(std::span(code))))
    return false;
  if (code[0] != 0x0f || code[1] != 0xa2)
    return false;
  regs->set_cpuid(cpuid_answer(regs->cpuid_leaf(), regs->cpuid_subleaf()));
  regs->set_ip(regs->ip() + code.size());
  note(Source::kCpuid, Via::kOther);
  if (auto set = tracee.set_registers(*regs); !set)
    return set.error();
  return true;
}

Result<void> Environment::answer_tsc(ProcessAccess &tracee, Registers regs,
                                     std::uint8_t length, bool rdtscp,
                                     Source source) {
  const std::uint64_t tsc = clock_.tsc();
  regs.set_tsc(tsc);
  regs.set_ip(regs.ip() + length);
  if (rdtscp)
    regs.set_tsc_aux(0); // CPU 0
  note(source, Via::kOther);
  sources_.note_tsc_sites(tsc_.count());
  return tracee.set_registers(regs);
}

Result<Action> answer_clock_gettime(SeccompStop &stop) {
  const auto now =
      stop.environment.clock().now(static_cast<clockid_t>(stop.regs.arg(0)));
  if (!now)
    return Action::answer(-EINVAL);
  return Action::answer(
      put(stop.tracee, stop.regs.arg_ptr<timespec>(1), *now) ? 0 : kFault);
}

Result<Action> answer_gettimeofday(SeccompStop &stop) {
  const timespec now = *stop.environment.clock().now(CLOCK_REALTIME);
  const timeval tv{now.tv_sec, now.tv_nsec / 1000};
  const struct timezone utc {};
  return Action::answer(
      put(stop.tracee, stop.regs.arg_ptr<timeval>(0), tv) &&
              put(stop.tracee, stop.regs.arg_ptr<struct timezone>(1), utc)
          ? 0
          : kFault);
}

Result<Action> answer_time(SeccompStop &stop) {
  const time_t seconds = stop.environment.clock().now(CLOCK_REALTIME)->tv_sec;
  return Action::answer(put(stop.tracee, stop.regs.arg_ptr<time_t>(0), seconds)
                            ? seconds
                            : kFault);
}

Result<Action> answer_clock_getres(SeccompStop &stop) {
  if (!stop.environment.clock().now(static_cast<clockid_t>(stop.regs.arg(0))))
    return Action::answer(-EINVAL);
  return Action::answer(
      put(stop.tracee, stop.regs.arg_ptr<timespec>(1), timespec{0, 1})
          ? 0
          : kFault);
}

Result<Action> answer_getcpu(SeccompStop &stop) {
  const unsigned zero = 0;
  return Action::answer(
      put(stop.tracee, stop.regs.arg_ptr<unsigned>(0), zero) &&
              put(stop.tracee, stop.regs.arg_ptr<unsigned>(1), zero)
          ? 0
          : kFault);
}

Result<Action> answer_sched_getaffinity(SeccompStop &stop) {
  // The kernel copies its cpumask, a whole number of longs, and fails for
  // a buffer too small to hold one (on a machine of one CPU: 8 bytes).
  const std::uint64_t size = stop.regs.arg(1);
  if (size < sizeof(std::uint64_t) || size % sizeof(std::uint64_t) != 0)
    return Action::answer(-EINVAL);
  const std::uint64_t cpu0 = 1;
  if (stop.regs.arg(2) == 0)
    return Action::answer(kFault);
  return Action::answer(
      put(stop.tracee, stop.regs.arg_ptr<std::uint64_t>(2), cpu0)
          ? static_cast<long>(sizeof cpu0)
          : kFault);
}

Result<Action> answer_sched_setaffinity(SeccompStop &stop) {
  // The kernel reads size bytes of mask (zeros past them); CPU 0 is bit 0
  // of its first byte.
  if (stop.regs.arg(1) == 0)
    return Action::answer(-EINVAL);
  auto first = stop.tracee.read(stop.regs.arg_ptr<std::uint8_t>(2));
  if (!first)
    return Action::answer(kFault);
  return Action::answer((*first & 1) != 0 ? 0 : -EINVAL);
}

Result<Action> answer_arch_cpuid(SeccompStop &stop) {
  const std::uint64_t code = stop.regs.arg(0);
  if (!cpuid_faults() || (code != ARCH_GET_CPUID && code != ARCH_SET_CPUID))
    return Action::run();
  return Action::answer(code == ARCH_GET_CPUID ? 1 : 0);
}

Result<Action> answer_getrandom(SeccompStop &stop) {
  const std::uint64_t length =
      std::min<std::uint64_t>(stop.regs.arg(1), std::uint64_t{32} << 20);
  if (!stop.environment.fill_random(stop.tracee, stop.regs.arg(0), length))
    return Action::answer(kFault);
  return Action::answer(static_cast<long>(length));
}

} // namespace cmc::tracer
