#include "app/cli/site_listing.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include <fmt/format.h>

#include "decoder/elf_file.h"
#include "decoder/library_search.h"
#include "decoder/syscall_scan.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

Module scan_module(const std::string &path) {
  auto elf = decoder::ElfFile::open(path);
  if (!elf)
    cannot_check(elf.error().message);
  auto file = decoder::scan_file(*elf);
  if (!file)
    cannot_check(file.error().message);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    cannot_check(fmt::format("cannot stat {}", path));
  return {path,
          {major(st.st_dev), minor(st.st_dev), st.st_ino},
          elf->loads(),
          std::move(*file)};
}

std::string numbers_text(const std::vector<long> &numbers) {
  std::string text;
  for (const long number : numbers) {
    const std::string name = decoder::syscall_name(number);
    text += fmt::format("{}{}", text.empty() ? "" : ", ",
                        name.empty() ? std::to_string(number) : name);
  }
  return text;
}

bool listed_by_default(const decoder::SyscallSite &site) {
  return site.origin == decoder::SiteOrigin::kInline ||
         site.origin == decoder::SiteOrigin::kUnknown;
}

std::string number_text(const decoder::SyscallSite &site) {
  if (!site.number)
    return "?";
  const std::string name = decoder::syscall_name(*site.number);
  return name.empty() ? std::to_string(*site.number)
                      : fmt::format("{} ({})", *site.number, name);
}

// "  (181 libc, 2 inline; static executable: ...)": the number of sites of
// each origin present, and how they were told apart; then "; 2 rdtsc" when
// the file has rdtsc or rdtscp instructions, and "; 38 cpuid, 1 rdpid" for
// the instructions only CPUID faulting hides.
std::string summary_note(const decoder::FileSites &file) {
  std::string counts;
  for (const auto origin :
       {decoder::SiteOrigin::kLibc, decoder::SiteOrigin::kLoader,
        decoder::SiteOrigin::kInline, decoder::SiteOrigin::kUnknown}) {
    const auto count =
        std::count_if(file.sites.begin(), file.sites.end(),
                      [&](const auto &site) { return site.origin == origin; });
    if (count > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", count,
                            decoder::origin_name(origin));
  }
  const std::string note = attribution_note(file);
  if (!note.empty())
    counts += fmt::format("{}static executable: {}", counts.empty() ? "" : "; ",
                          note);
  if (!file.tsc_sites.empty())
    counts += fmt::format("{}{} rdtsc", counts.empty() ? "" : "; ",
                          file.tsc_sites.size());
  std::string cpu;
  for (const auto instruction :
       {decoder::CpuInstruction::kCpuid, decoder::CpuInstruction::kRdrand,
        decoder::CpuInstruction::kRdseed, decoder::CpuInstruction::kRdpid}) {
    const auto count = std::ranges::count(file.cpu_sites, instruction,
                                          &decoder::CpuSite::instruction);
    if (count > 0)
      cpu += fmt::format("{}{} {}", cpu.empty() ? "" : ", ", count,
                         decoder::instruction_name(instruction));
  }
  if (!cpu.empty())
    counts += fmt::format("{}{}", counts.empty() ? "" : "; ", cpu);
  return counts.empty() ? "" : fmt::format("  ({})", counts);
}

// " observed 3" or " never reached" in a run; "" without one.
std::string mark_text(const SiteMarks *marks, std::size_t module,
                      std::size_t site) {
  if (marks == nullptr)
    return "";
  const std::size_t stops = marks->stops[module][site];
  return stops > 0 ? fmt::format(" observed {}", stops) : " never reached";
}

std::string observed_text(const SiteMarks *marks, std::size_t module) {
  if (marks == nullptr)
    return "";
  const auto &stops = marks->stops[module];
  return fmt::format("  {} observed",
                     std::count_if(stops.begin(), stops.end(),
                                   [](std::size_t n) { return n > 0; }));
}

} // namespace

std::string attribution_note(const decoder::FileSites &file) {
  switch (file.attribution) {
  case decoder::Attribution::kFileName:
    return "";
  case decoder::Attribution::kStaticLibc:
    return fmt::format("libc's functions from {}", file.static_libc);
  case decoder::Attribution::kNoStaticLibc:
    return fmt::format("{}: libc's sites are counted as inline",
                       file.static_libc_error);
  case decoder::Attribution::kNoSymbols:
    return "no function symbols: libc's sites cannot be told from inline ones";
  }
  return "";
}

std::vector<Module> scan_modules(const std::string &binary) {
  auto executable = decoder::ElfFile::open(binary);
  if (!executable)
    cannot_check(executable.error().message);
  auto libraries = decoder::loaded_libraries(*executable);
  if (!libraries)
    cannot_check(libraries.error().message);
  std::vector<Module> modules{scan_module(binary)};
  for (const std::string &library : *libraries)
    modules.push_back(scan_module(library));
  return modules;
}

void print_sites(const std::vector<Module> &modules, bool all_sites,
                 const SiteMarks *marks) {
  for (std::size_t m = 0; m < modules.size(); ++m)
    for (std::size_t i = 0; i < modules[m].file.sites.size(); ++i) {
      const auto &site = modules[m].file.sites[i];
      if (all_sites || listed_by_default(site))
        fmt::print("{} {:#x} {} {} {} {}{}\n", modules[m].path, site.address,
                   site.function.name.empty() ? "?" : site.function.name,
                   site.instruction, number_text(site),
                   decoder::origin_name(site.origin), mark_text(marks, m, i));
    }
  fmt::print("summary:\n");
  for (std::size_t m = 0; m < modules.size(); ++m)
    fmt::print("  {:6} sites  {}{}{}\n", modules[m].file.sites.size(),
               modules[m].path, summary_note(modules[m].file),
               observed_text(marks, m));
}

void print_calls_seen(const SiteMarks &marks) {
  fmt::print("vDSO functions called:{}\n",
             marks.vdso_calls.empty() ? " none" : "");
  for (const VdsoCall &call : marks.vdso_calls)
    fmt::print("  {}  {} calls\n",
               call.function.empty() ? "? (outside every function)"
                                     : call.function,
               call.calls);
  if (!marks.unscanned.empty())
    fmt::print("system calls at no scanned site:\n");
  for (const UnscannedSite &site : marks.unscanned)
    fmt::print("  {} {} {:#x}: {} ({} calls){}\n",
               site.path.empty() ? "(anonymous memory)" : site.path,
               site.in_module ? "address" : "file offset", site.address,
               numbers_text(site.seen->numbers), site.seen->count,
               site.in_module ? "; MISSED BY THE SCAN" : "");
}

} // namespace cmc::app
