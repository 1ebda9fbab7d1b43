#include "tracer/time/tsc_patches.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "decoder/elf_file.h"
#include "decoder/library_search.h"
#include "util/log.h"

namespace cmc::tracer {
namespace {

// Runs in a child of cmc (which has threads): async-signal-safe calls only.
[[noreturn]] void run_probe() {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); // no core file of the fault
  signal(SIGSEGV, SIG_DFL);
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
    _exit(2);
  const volatile std::uint64_t tsc = __rdtsc();
  (void)tsc;
  _exit(0);
}

bool probe_tsc_traps() {
  const char *forced = std::getenv("CMC_RDTSC");
  if (forced != nullptr && std::string_view(forced) == "patch")
    return false;
  const pid_t child = fork();
  if (child == 0)
    run_probe();
  int status = 0;
  while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool traps =
      child > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
  CMC_LOG_INFO("tracer", "rdtsc after PR_SET_TSC(PR_TSC_SIGSEGV): {}",
               traps ? "faults; the target's rdtsc is trapped"
                     : "runs (the CPU or its hypervisor ignores CR4.TSD); the "
                       "target's rdtsc sites are patched with int3");
  return traps;
}

// The rdtsc sites and the _dl_debug_state of one file, by file offset.
struct FileTsc {
  std::vector<decoder::TscSite> sites; // address: the file offset
  std::vector<decoder::CpuSite> cpu;   // address: the file offset
  std::optional<std::uint64_t> debug_state;
};

std::optional<std::uint64_t> file_offset(const decoder::ElfFile &elf,
                                         std::uint64_t address) {
  for (const auto &load : elf.loads())
    if (address >= load.vaddr && address < load.vaddr + load.filesz)
      return address - load.vaddr + load.offset;
  return std::nullopt;
}

Result<FileTsc> scan(const std::string &path) {
  auto elf = decoder::ElfFile::open(path);
  if (!elf)
    return elf.error();
  auto sites = decoder::scan_instruction_sites(*elf);
  if (!sites)
    return sites.error();
  FileTsc file;
  for (decoder::TscSite site : sites->tsc)
    if (const auto offset = file_offset(*elf, site.address)) {
      site.address = *offset;
      file.sites.push_back(site);
    }
  for (decoder::CpuSite site : sites->cpu)
    if (const auto offset = file_offset(*elf, site.address)) {
      site.address = *offset;
      file.cpu.push_back(site);
    }
  if (const auto debug = elf->find_symbol("_dl_debug_state"))
    file.debug_state = file_offset(*elf, debug->value);
  return file;
}

// A file's identity and version: a file rewritten in place keeps its
// inode but not its size and modification time.
using FileKey = std::tuple<dev_t, ino_t, off_t, std::int64_t, std::int64_t>;

Result<FileKey> file_key(const std::string &path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0)
    return system_error(fmt::format("cannot stat {}", path), errno);
  return FileKey{info.st_dev, info.st_ino, info.st_size, info.st_mtim.tv_sec,
                 info.st_mtim.tv_nsec};
}

// The scan of a mapped file (path), once per version of the file per cmc
// process; the search's workers share it.
Result<std::shared_ptr<const FileTsc>> file_tsc(const std::string &path) {
  const auto key = file_key(path);
  if (!key)
    return key.error();
  static std::mutex mutex;
  static std::map<FileKey, std::shared_ptr<const FileTsc>> files;
  const std::scoped_lock lock(mutex);
  if (const auto found = files.find(*key); found != files.end())
    return found->second;
  auto file = scan(path);
  if (!file)
    return file.error();
  auto shared = std::make_shared<const FileTsc>(std::move(*file));
  files.emplace(*key, shared);
  return shared;
}

bool patchable(const decoder::Mapping &mapping) {
  return mapping.perms.find('x') != std::string::npos &&
         mapping.path.starts_with('/');
}

constexpr std::byte kInt3{0xcc};
constexpr std::byte kRet{0xc3};
constexpr std::byte kTwoByte{0x0f}; // the escape byte of rdtsc and rdtscp

} // namespace

bool tsc_traps() {
  static const bool traps = probe_tsc_traps();
  return traps;
}

void scan_tsc_ahead(const std::string &executable) {
  const auto key = file_key(executable);
  if (!key)
    return;
  {
    static std::mutex mutex;
    static std::set<FileKey> done;
    const std::scoped_lock lock(mutex);
    if (!done.insert(*key).second)
      return;
  }
  auto elf = decoder::ElfFile::open(executable);
  if (!elf)
    return;
  std::vector<std::string> paths{executable};
  if (auto libraries = decoder::loaded_libraries(*elf))
    paths.insert(paths.end(), libraries->begin(), libraries->end());
  for (const std::string &path : paths)
    (void)file_tsc(path);
}

Result<void> TscPatches::patch_mapped(ProcessAccess &tracee) {
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  const auto mapped = [&](std::uint64_t start, const Patched &patched) {
    return std::ranges::any_of(*maps, [&](const decoder::Mapping &m) {
      return m.start == start && m.end == patched.end &&
             m.inode == patched.inode && patchable(m);
    });
  };
  for (auto it = mappings_.begin(); it != mappings_.end();) {
    if (mapped(it->first, it->second)) {
      ++it;
      continue;
    }
    sites_.erase(sites_.lower_bound(it->first),
                 sites_.lower_bound(it->second.end));
    if (debug_state_ && *debug_state_ >= it->first &&
        *debug_state_ < it->second.end)
      debug_state_.reset();
    it = mappings_.erase(it);
  }
  for (const decoder::Mapping &mapping : *maps)
    if (patchable(mapping) && !mappings_.contains(mapping.start))
      if (auto patched = patch(tracee, mapping); !patched)
        return patched;
  return {};
}

Result<void> TscPatches::patch(ProcessAccess &tracee,
                               const decoder::Mapping &mapping) {
  // The mapping's own file, as the target sees it, whatever its mount
  // namespace or a rename since.
  const std::string path = fmt::format(
      "/proc/{}/map_files/{:x}-{:x}", tracee.pid(), mapping.start, mapping.end);
  auto file = file_tsc(path);
  if (!file) {
    CMC_LOG_WARN("tracer", "cannot scan {} for rdtsc: {}", mapping.path,
                 file.error().message);
    if (std::ranges::find(unscanned_, mapping.path) == unscanned_.end())
      unscanned_.push_back(mapping.path);
    mappings_[mapping.start] = {mapping.end, mapping.inode};
    return {};
  }
  const std::uint64_t size = mapping.end - mapping.start;
  const auto address =
      [&](std::uint64_t offset) -> std::optional<std::uint64_t> {
    if (offset < mapping.offset || offset - mapping.offset >= size)
      return std::nullopt;
    return mapping.start + (offset - mapping.offset);
  };
  for (decoder::TscSite site : (*file)->sites)
    if (const auto at = address(site.address)) {
      if (auto patched = tracee.patch_code(*at, std::array{kInt3}); !patched)
        return patched;
      site.address = *at;
      sites_[*at] = site;
    }
  const std::string name = mapping.path.substr(mapping.path.rfind('/') + 1);
  for (const decoder::CpuSite &site : (*file)->cpu)
    if (address(site.address))
      cpu_sites_.emplace(site.instruction,
                         fmt::format("{}+{:#x}", name, site.address));
  if (const auto at = (*file)->debug_state ? address(*(*file)->debug_state)
                                           : std::nullopt) {
    // glibc's _dl_debug_state is a bare ret: a breakpoint answers it.
    auto code = tracee.read(RemotePtr<std::byte>(*at));
    if (code && *code == kRet) {
      if (auto patched = tracee.patch_code(*at, std::array{kInt3}); !patched)
        return patched;
      debug_state_ = *at;
    }
  }
  mappings_[mapping.start] = {mapping.end, mapping.inode};
  return {};
}

Result<void> TscPatches::unpatch_all(ProcessAccess &tracee) {
  // rdtsc (0f 31) and rdtscp (0f 01 f9) both begin with 0f.
  for (const auto &[address, site] : sites_)
    if (auto restored = tracee.patch_code(address, std::array{kTwoByte});
        !restored)
      return restored;
  if (debug_state_)
    if (auto restored = tracee.patch_code(*debug_state_, std::array{kRet});
        !restored)
      return restored;
  forget();
  return {};
}

const decoder::TscSite *TscPatches::site_at(std::uint64_t address) const {
  const auto found = sites_.find(address);
  return found != sites_.end() ? &found->second : nullptr;
}

} // namespace cmc::tracer
