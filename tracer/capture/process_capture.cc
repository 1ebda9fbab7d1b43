#include "tracer/capture/process_capture.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "tracer/process/ptrace_unsafe.h"
#include "util/unique_fd.h"

namespace cmc::tracer {
namespace {

constexpr std::uint64_t kPage = 4096;
// Read whole; ThreadLiveness leaves out what no code reads.
constexpr std::uint64_t kRedZone = decoder::kRedZone;
// /proc/PID/pagemap: one 64-bit entry per page.
constexpr std::uint64_t kPresent = 1ULL << 63;
constexpr std::uint64_t kSwapped = 1ULL << 62;

std::uint64_t page_down(std::uint64_t address) {
  return address & ~(kPage - 1);
}
std::uint64_t page_up(std::uint64_t address) {
  return page_down(address + kPage - 1);
}

// Addresses [start, end) of the target to read. Anonymous: a page the
// kernel never backed reads as zero and is not read.
struct ReadRange {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  bool anonymous = false;
};

// Which bytes of which mappings are state, and their names.
class MemoryPlan {
public:
  // arg_start: where argv's strings begin (0 when unknown).
  MemoryPlan(ProcessCapture &capture, const CaptureContext &context,
             std::uint64_t arg_start)
      : capture_(capture), context_(context), arg_start_(arg_start) {}

  void add(std::span<const decoder::Mapping> maps);
  [[nodiscard]] std::vector<decoder::MemorySegment> &memory() {
    return memory_;
  }
  [[nodiscard]] std::vector<decoder::MappedRange> &mapped() { return mapped_; }
  [[nodiscard]] std::vector<std::uint64_t> &plt_slots() { return plt_slots_; }
  [[nodiscard]] const std::vector<ReadRange> &ranges() const { return ranges_; }
  [[nodiscard]] const std::vector<StackParts> &stacks() const {
    return stacks_;
  }
  // Once read: drops the zeros at the end of the main thread's stack below
  // argv's strings. With ASLR the kernel leaves a gap of random size
  // there (arch_align_stack); the bytes below it are where they are from
  // the stack pointer.
  void trim_gap();

private:
  void add_mapped(const decoder::Mapping &mapping);
  void add_stack(std::size_t thread, const decoder::Mapping *before,
                 const decoder::Mapping &mapping, std::uint64_t start);
  void add_dead_stack(std::size_t thread, const decoder::Mapping *before,
                      const decoder::Mapping &mapping, std::uint64_t live);
  // The thread whose stack pointer is in mapping (the lowest one, should
  // two be), if any.
  [[nodiscard]] std::optional<std::size_t>
  stack_of(const decoder::Mapping &mapping) const;
  void add_file(const decoder::Mapping &mapping, const decoder::Mapping *next);
  void add_sections(const ProcessCapture::FileLayout &file, std::uint64_t bias,
                    std::uint64_t start, std::uint64_t end);
  void add_plt_slots(const ProcessCapture::FileLayout &file, std::uint64_t bias,
                     std::uint64_t start, std::uint64_t end);
  void add_segment(std::string name, decoder::MemoryKind kind,
                   std::uint64_t start, std::uint64_t end);
  void add_range(std::uint64_t start, std::uint64_t end, bool anonymous);

  ProcessCapture &capture_;
  const CaptureContext &context_;
  std::uint64_t arg_start_;
  std::vector<decoder::MemorySegment> memory_;
  std::vector<decoder::MappedRange> mapped_;
  std::vector<std::uint64_t> plt_slots_;
  std::vector<ReadRange> ranges_;
  std::vector<StackParts> stacks_;
  std::uint64_t covered_ = 0; // the end of the last range added
  std::size_t anonymous_ = 0; // anonymous mappings named so far
  std::optional<std::size_t> below_arguments_; // the segment trim_gap trims
};

void MemoryPlan::trim_gap() {
  if (!below_arguments_)
    return;
  auto &bytes = memory_[*below_arguments_].bytes;
  while (!bytes.empty() && bytes.back() == std::byte{0})
    bytes.pop_back();
}

// arg_start, field 48 of /proc/PID/stat: the address of argv[0]'s string;
// 0 when it cannot be read.
std::uint64_t arg_start_of(pid_t pid) {
  std::ifstream file(fmt::format("/proc/{}/stat", pid));
  const std::string text((std::istreambuf_iterator<char>(file)), {});
  const auto name_end = text.rfind(')');
  if (name_end == std::string::npos)
    return 0;
  // Fields from the third (state) on follow the command's name.
  constexpr int kArgStartAfterName = 48 - 3;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  for (int i = 0; i <= kArgStartAfterName && fields >> field; ++i)
    if (i == kArgStartAfterName)
      return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

bool is_file(const decoder::Mapping &mapping) {
  return !mapping.path.empty() && !mapping.path.starts_with('[');
}

void MemoryPlan::add(std::span<const decoder::Mapping> maps) {
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const decoder::Mapping &mapping = maps[i];
    // The kernel's clock pages and the legacy vsyscall page hold nothing
    // of the target's.
    if (mapping.path.starts_with("[vvar") || mapping.path == "[vsyscall]")
      continue;
    if (mapping.perms.size() < 2 || mapping.perms[1] != 'w') {
      add_mapped(mapping);
      continue;
    }
    const std::uint64_t start = std::max(mapping.start, covered_);
    if (start >= mapping.end)
      continue; // a .bss tail, added with its file
    if (const auto thread = stack_of(mapping)) {
      add_stack(*thread, i > 0 ? &maps[i - 1] : nullptr, mapping, start);
    } else if (mapping.path == "[heap]") {
      add_range(start, mapping.end, true);
      add_segment("[heap]", decoder::MemoryKind::kHeap, start, mapping.end);
    } else if (is_file(mapping) && start == mapping.start) {
      add_file(mapping, i + 1 < maps.size() ? &maps[i + 1] : nullptr);
    } else {
      add_range(start, mapping.end, !is_file(mapping));
      add_segment(fmt::format("anonymous {}", ++anonymous_),
                  decoder::MemoryKind::kAnonymous, start, mapping.end);
    }
  }
}

void MemoryPlan::add_stack(std::size_t thread, const decoder::Mapping *before,
                           const decoder::Mapping &mapping,
                           std::uint64_t start) {
  const std::uint64_t rsp = context_.threads[thread].registers.sp();
  // The red zone may reach below the mapping (the kernel grows the main
  // thread's stack a page at a time, and with ASLR its stack pointer is
  // at a random offset in its page): those bytes were never written and
  // read as zero, so that the live stack always starts 128 bytes below
  // the stack pointer.
  const std::uint64_t live = std::max(covered_, rsp - kRedZone);
  add_dead_stack(thread, before, mapping, live);
  stacks_.push_back({thread, memory_.size(), mapped_.size() - 1});
  add_range(std::max(start, live), mapping.end, true);
  // The kernel copied argv and the environment to the top of the main
  // thread's stack, above a gap of random size with ASLR
  // (arch_align_stack): pointers into them (argv[0] in
  // program_invocation_name) count from their start.
  const std::uint64_t split =
      arg_start_ > live && arg_start_ < mapping.end ? arg_start_ : mapping.end;
  add_segment(fmt::format("stack of thread {}", thread + 1),
              decoder::MemoryKind::kStack, live, split);
  if (split < mapping.end) {
    below_arguments_ = memory_.size() - 1;
    add_segment("arguments and environment", decoder::MemoryKind::kStack, split,
                mapping.end);
  }
}

// A thread's stack below its live part, and the guard page glibc put at
// the low end of the block it mmap'd for a thread's stack (struct
// pthread's stackblock points there): pointers into them (left by the
// thread, or by pthread_create in the creator's frames) are named as the
// thread's, counted down from its live part.
void MemoryPlan::add_dead_stack(std::size_t thread,
                                const decoder::Mapping *before,
                                const decoder::Mapping &mapping,
                                std::uint64_t live) {
  std::uint64_t start = mapping.start;
  if (before != nullptr && before->end == mapping.start &&
      before->path.empty() && before->perms.starts_with("---"))
    start = before->start;
  // Empty when the live part starts below the mapping: every thread's
  // stack has its names, so that the names' order does not change.
  mapped_.push_back(
      {fmt::format("stack of thread {} below its pointer", thread + 1),
       std::min(start, live), live, true});
}

void MemoryPlan::add_mapped(const decoder::Mapping &mapping) {
  const std::string_view perms = std::string_view(mapping.perms).substr(0, 3);
  if (perms == "---")
    return; // guard pages and reserved address space: no pointer is into
            // them
  std::string name =
      is_file(mapping)
          ? fmt::format("{} {} at {:#x}", mapped_file_name(mapping.path), perms,
                        mapping.offset)
      : mapping.path.empty()
          ? fmt::format("anonymous {} {}", perms, mapped_.size() + 1)
          : mapping.path;
  mapped_.push_back({std::move(name), mapping.start, mapping.end});
}

std::optional<std::size_t>
MemoryPlan::stack_of(const decoder::Mapping &mapping) const {
  if (!mapping.path.empty() && mapping.path != "[stack]")
    return std::nullopt;
  std::optional<std::size_t> lowest;
  for (std::size_t i = 0; i < context_.threads.size(); ++i) {
    const std::uint64_t rsp = context_.threads[i].registers.sp();
    if (rsp >= mapping.start && rsp < mapping.end &&
        (!lowest || rsp < context_.threads[*lowest].registers.sp()))
      lowest = i;
  }
  return lowest;
}

// The writable PT_LOAD a file mapping at offset maps part of.
const decoder::LoadSegment *load_at(const ProcessCapture::FileLayout &file,
                                    std::uint64_t offset) {
  for (const decoder::LoadSegment &load : file.loads)
    if ((load.flags & PF_W) != 0 && page_down(load.offset) <= offset &&
        offset < load.offset + load.filesz)
      return &load;
  return nullptr;
}

void MemoryPlan::add_file(const decoder::Mapping &mapping,
                          const decoder::Mapping *next) {
  const ProcessCapture::FileLayout &file = capture_.layout_of(mapping);
  const decoder::LoadSegment *load = load_at(file, mapping.offset);
  // Not read from the file again: a private page the target never wrote
  // is still the file's, which need not be zero.
  add_range(mapping.start, mapping.end, false);
  if (load == nullptr || file.sections.empty()) {
    add_segment(fmt::format("{} at {:#x}", file.name, mapping.offset),
                decoder::MemoryKind::kData, mapping.start, mapping.end);
    return;
  }
  const std::uint64_t bias =
      mapping.start - (load->vaddr - load->offset + mapping.offset);
  std::uint64_t end = mapping.end;
  // The part of the segment past the file's end (.bss) is anonymous
  // memory the loader mapped right after it.
  const std::uint64_t extent = page_up(bias + load->vaddr + load->memsz);
  if (next != nullptr && next->path.empty() && next->start == mapping.end &&
      next->perms.starts_with("rw") && extent > mapping.end) {
    end = std::min(next->end, extent);
    add_range(mapping.end, end, true);
  }
  add_sections(file, bias, mapping.start, end);
  add_plt_slots(file, bias, mapping.start, end);
}

void MemoryPlan::add_plt_slots(const ProcessCapture::FileLayout &file,
                               std::uint64_t bias, std::uint64_t start,
                               std::uint64_t end) {
  for (const std::uint64_t slot : file.jump_slots)
    if (bias + slot >= start && bias + slot + 8 <= end)
      plt_slots_.push_back(bias + slot);
}

void MemoryPlan::add_sections(const ProcessCapture::FileLayout &file,
                              std::uint64_t bias, std::uint64_t start,
                              std::uint64_t end) {
  // Bytes between sections (alignment, the rest of the last page) are
  // named by their link-time address.
  const auto add_gap = [&](std::uint64_t from, std::uint64_t to) {
    add_segment(fmt::format("{} at {:#x}", file.name, from - bias),
                decoder::MemoryKind::kData, from, to);
  };
  std::uint64_t cursor = start;
  for (const decoder::Symbol &section : file.sections) {
    const std::uint64_t from = std::max(bias + section.value, cursor);
    const std::uint64_t to = std::min(bias + section.value + section.size, end);
    if (from >= to)
      continue;
    if (from > cursor)
      add_gap(cursor, from);
    add_segment(fmt::format("{} of {}", section.name, file.name),
                decoder::MemoryKind::kData, from, to);
    memory_.back().symbols = file.objects;
    memory_.back().link_address = from - bias;
    cursor = to;
  }
  if (cursor < end)
    add_gap(cursor, end);
}

void MemoryPlan::add_segment(std::string name, decoder::MemoryKind kind,
                             std::uint64_t start, std::uint64_t end) {
  decoder::MemorySegment segment{std::move(name), kind, start, {}};
  segment.bytes.resize(end - start);
  memory_.push_back(std::move(segment));
}

void MemoryPlan::add_range(std::uint64_t start, std::uint64_t end,
                           bool anonymous) {
  ranges_.push_back({start, end, anonymous});
  covered_ = end;
}

// The parts of the ranges to read: anonymous pages neither present nor
// swapped out are left out (they read as zero), adjacent parts joined.
Result<std::vector<ReadRange>> backed(pid_t pid,
                                      std::span<const ReadRange> ranges) {
  const std::string path = fmt::format("/proc/{}/pagemap", pid);
  const UniqueFd pagemap(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!pagemap.valid())
    return proc_error("cannot open " + path, errno);
  std::vector<ReadRange> parts;
  const auto add = [&](std::uint64_t start, std::uint64_t end) {
    if (!parts.empty() && parts.back().end == start)
      parts.back().end = end;
    else
      parts.push_back({start, end, false});
  };
  std::vector<std::uint64_t> entries;
  for (const ReadRange &range : ranges) {
    if (!range.anonymous) {
      add(range.start, range.end);
      continue;
    }
    const std::uint64_t first = page_down(range.start);
    entries.resize((page_up(range.end) - first) / kPage);
    const auto size = static_cast<ssize_t>(entries.size() * sizeof entries[0]);
    if (pread(pagemap.get(), entries.data(), static_cast<std::size_t>(size),
              static_cast<off_t>(first / kPage * sizeof entries[0])) != size)
      return proc_error("cannot read " + path, errno);
    for (std::size_t page = 0; page < entries.size(); ++page)
      if ((entries[page] & (kPresent | kSwapped)) != 0)
        add(std::max(range.start, first + page * kPage),
            std::min(range.end, first + (page + 1) * kPage));
  }
  return parts;
}

// Reads the parts into the segments that hold them; both are sorted and
// the parts lie in the segments' ranges. Returns the bytes read.
Result<std::size_t> read_into(pid_t pid, std::span<const ReadRange> parts,
                              std::span<decoder::MemorySegment> memory) {
  std::vector<iovec> remote;
  std::vector<iovec> local;
  std::size_t total = 0;
  std::size_t next = 0;
  for (decoder::MemorySegment &segment : memory) {
    const std::uint64_t end = segment.address + segment.bytes.size();
    while (next < parts.size() && parts[next].end <= segment.address)
      ++next;
    for (std::size_t i = next; i < parts.size() && parts[i].start < end; ++i) {
      const std::uint64_t from = std::max(parts[i].start, segment.address);
      const std::uint64_t length = std::min(parts[i].end, end) - from;
      remote.push_back({reinterpret_cast<void *>(from), length});
      local.push_back(
          {segment.bytes.data() + (from - segment.address), length});
      total += length;
    }
  }
  if (auto read = sys::read_memory_scattered(pid, remote, local); !read)
    return read.error().after("cannot read the target's memory: ");
  return total;
}

} // namespace

std::string mapped_file_name(std::string_view path) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted))
    path.remove_suffix(kDeleted.size());
  return std::string(path.substr(path.rfind('/') + 1));
}

const ProcessCapture::FileLayout &
ProcessCapture::layout_of(const decoder::Mapping &mapping) {
  const auto key =
      std::tuple(mapping.dev_major, mapping.dev_minor, mapping.inode);
  if (auto found = files_.find(key); found != files_.end())
    return found->second;
  FileLayout layout{mapped_file_name(mapping.path), {}, {}, {}, {}};
  std::error_code error;
  // A shared mapping of a device or of memory is nothing to split.
  if (!std::filesystem::is_regular_file(mapping.path, error))
    return files_.emplace(key, std::move(layout)).first->second;
  if (auto elf = decoder::ElfFile::open(mapping.path)) {
    layout.sections = elf->writable_sections();
    layout.loads = elf->loads();
    layout.jump_slots = elf->jump_slots();
    layout.objects = std::make_shared<const std::vector<decoder::Symbol>>(
        elf->data_objects());
  }
  return files_.emplace(key, std::move(layout)).first->second;
}

Result<decoder::ProcessImage>
ProcessCapture::capture(const Tracee &tracee, const CaptureContext &context) {
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  MemoryPlan plan(*this, context, arg_start_of(tracee.process()));
  plan.add(*maps);
  auto parts = backed(tracee.process(), plan.ranges());
  if (!parts)
    return parts.error();
  decoder::ProcessImage image;
  auto read = read_into(tracee.process(), *parts, plan.memory());
  if (!read)
    return read.error();
  image.bytes_read = *read;
  plan.trim_gap();
  image.memory = std::move(plan.memory());
  image.mapped = std::move(plan.mapped());
  image.plt_slots = std::move(plan.plt_slots());
  // By the ids the target knows (glibc keeps them in each thread's TCB).
  for (const ThreadRegisters &thread : context.threads) {
    auto id = tracee.namespace_tid(thread.id);
    if (!id)
      return id.error();
    image.threads.push_back(
        {static_cast<std::uint32_t>(*id), thread.registers.raw()});
  }
  liveness_.apply(tracee.process(), *maps, plan.stacks(), image);
  auto descriptors =
      capture_descriptors(tracee, context.sockets, context.workdir);
  if (!descriptors)
    return descriptors.error();
  image.descriptors = std::move(*descriptors);
  image.pid = static_cast<std::uint32_t>(tracee.process());
  return image;
}

} // namespace cmc::tracer
