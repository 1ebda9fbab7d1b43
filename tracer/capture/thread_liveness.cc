#include "tracer/capture/thread_liveness.h"

#include <sys/uio.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>

#include "tracer/process/ptrace_unsafe.h"
#include "tracer/syscalls/syscall_table.h"

namespace cmc::tracer {
namespace {

// The pages analyse_liveness reads code in.
constexpr std::uint64_t kCodePage = 4096;
constexpr std::size_t kRegisterBytes = 8;

// The argument registers the call reads: its shape's arguments, all six
// when the table knows none.
int arguments_of(long number) {
  const Syscall *row = syscall_of(number);
  if (row == nullptr || !row->shape)
    return 6;
  return static_cast<int>(decoder::shape_arguments(*row->shape).size());
}

decoder::MemoryReader reader_of(pid_t pid) {
  return [pid](std::uint64_t address, std::size_t length) {
    std::string bytes(length, '\0');
    const iovec remote{reinterpret_cast<void *>(address), length};
    if (!sys::read_memory(pid, std::span(&remote, 1),
                          std::as_writable_bytes(std::span(bytes))))
      return std::string();
    return bytes;
  };
}

// The file of an executable mapping at address, as (device, inode).
std::optional<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>>
code_file_at(std::span<const decoder::Mapping> maps, std::uint64_t address) {
  const decoder::Mapping *mapping = decoder::mapping_holding(maps, address);
  if (mapping == nullptr || mapping->inode == 0 ||
      mapping->perms.find('x') == std::string::npos)
    return std::nullopt;
  return std::tuple(mapping->dev_major, mapping->dev_minor, mapping->inode);
}

// The callers followed past the function a thread waits in.
constexpr int kFrames = 8;

// Whether the code the result was computed from is still there.
bool same_code(const decoder::MemoryReader &read, std::uint64_t rip,
               const decoder::Liveness &liveness) {
  const std::uint64_t page = rip & ~(kCodePage - 1);
  return std::all_of(
      liveness.code.begin(), liveness.code.end(), [&](const auto &code) {
        return read(page + static_cast<std::uint64_t>(code.first),
                    code.second.size()) == code.second;
      });
}

// A waiting thread's stack as liveness judges it: the dead part of its red
// zone (when the code leaves one) and the bytes of the frames from rsp to
// top, live where the frames' code reads them or a pointer of the process
// may reach them. A pointer into the stack may reach what lies at and
// above it (and reach bytes below: Liveness::reach), so only the lowest
// one found counts.
struct Watch {
  std::size_t thread = 0;
  std::size_t segment = 0;
  std::uint64_t rsp = 0;
  std::uint64_t top = 0;
  std::uint64_t reach = 0; // below a pointer, the most of every frame's code
  std::uint64_t reach_above = 0;
  // The red zone is garbage once the function the thread waits in
  // returns: only that function's reach counts for it.
  std::uint64_t red_zone_reach = 0;
  std::uint64_t red_zone_reach_above = 0;
  bool red_zone = false; // the code leaves some of it dead
  bool red_zone_pointed = false;
  decoder::StackBytes live;                 // of [rsp, top), offsets from rsp
  std::uint64_t lowest = ~std::uint64_t{0}; // pointed at, in the window

  // Addresses a pointer may hold to make some of it live.
  [[nodiscard]] bool holds(std::uint64_t value) const {
    return value >= rsp - decoder::kRedZone - reach_above &&
           value - reach < std::max(top, rsp);
  }
  // A word at an address no code reads: in the red zone (read only
  // through a pointer into it) or in the frames' dead bytes.
  [[nodiscard]] bool skips(std::uint64_t at) const {
    if (at + 8 <= rsp)
      return at >= rsp - decoder::kRedZone;
    const auto offset = static_cast<std::int64_t>(at - rsp);
    return at + 8 <= top && !live.intersects(offset, offset + 8);
  }
  // What a pointer to value leaves live; whether it changed.
  bool pointed(std::uint64_t value) {
    red_zone_pointed |=
        value >= rsp - decoder::kRedZone - red_zone_reach_above &&
        value < rsp + red_zone_reach;
    if (value >= lowest)
      return false;
    lowest = value;
    const std::uint64_t from = value - reach;
    live.add(from < rsp ? -static_cast<std::int64_t>(rsp - from)
                        : static_cast<std::int64_t>(from - rsp),
             decoder::StackBytes::kEnd);
    return true;
  }
};

// Each word (and what it holds mangled by the pointer guard) that points
// into a watched stack, but the words the watches skip.
class PointerScan {
public:
  PointerScan(std::span<Watch> watches, std::optional<std::uint64_t> guard)
      : watches_(watches), guard_(guard) {}

  // Whether a watch changed (so that words it skipped may count now).
  bool word(std::uint64_t at, std::uint64_t value) {
    // Most words point into no stack: asked first, as cheaply as can be.
    const auto held = [&](const Watch &w) {
      return w.holds(value) ||
             (guard_ && w.holds(decoder::demangled(value, *guard_)));
    };
    if (std::none_of(watches_.begin(), watches_.end(), held) ||
        std::any_of(watches_.begin(), watches_.end(),
                    [&](const Watch &w) { return w.skips(at); }))
      return false;
    return value_found(value);
  }
  bool value_found(std::uint64_t value) {
    bool changed = false;
    for (Watch &watch : watches_) {
      if (watch.holds(value))
        changed |= watch.pointed(value);
      if (guard_ && watch.holds(decoder::demangled(value, *guard_)))
        changed |= watch.pointed(decoder::demangled(value, *guard_));
    }
    return changed;
  }
  // The words of a segment in [from, to); whether a watch changed.
  bool segment(const decoder::MemorySegment &segment, std::uint64_t from,
               std::uint64_t to) {
    bool changed = false;
    const std::uint64_t end =
        std::min(to, segment.address + segment.bytes.size());
    for (std::uint64_t at =
             (std::max(from, segment.address) + 7) & ~std::uint64_t{7};
         at + 8 <= end; at += 8) {
      std::uint64_t value = 0;
      std::memcpy(&value, segment.bytes.data() + (at - segment.address), 8);
      changed |= word(at, value);
    }
    return changed;
  }

private:
  std::span<Watch> watches_;
  std::optional<std::uint64_t> guard_;
};

// The pointers of every live register and every word of memory, the
// stacks' words again while a watch's live part grows.
void scan_pointers(const decoder::ProcessImage &image,
                   std::span<Watch> watches) {
  PointerScan scan(watches, decoder::pointer_guard(image));
  for (std::size_t t = 0; t < image.threads.size(); ++t)
    for (Watch &watch : watches) {
      user_regs_struct live = decoder::without_dead(image.threads[t].registers,
                                                    image.threads[t].dead);
      if (watch.thread == t)
        live.rsp = 0; // the analysis follows every use of rsp
      std::array<std::uint64_t, sizeof live / 8> values{};
      std::memcpy(values.data(), &live, sizeof live);
      for (const std::uint64_t value : values)
        if (watch.holds(value))
          watch.pointed(value);
    }
  for (const decoder::MemorySegment &segment : image.memory)
    scan.segment(segment, 0, ~std::uint64_t{0});
  for (bool changed = true; changed;) {
    changed = false;
    for (const Watch &watch : watches)
      changed |=
          scan.segment(image.memory[watch.segment], watch.rsp, watch.top);
  }
}

} // namespace

const decoder::Liveness &
ThreadLiveness::analysed_at(pid_t pid, std::span<const decoder::Mapping> maps,
                            std::uint64_t address, long number) {
  const decoder::Mapping *mapping = decoder::mapping_holding(maps, address);
  const Key key =
      mapping != nullptr && mapping->inode != 0
          ? Key{mapping->dev_major, mapping->dev_minor, mapping->inode,
                address - mapping->start + mapping->offset, number}
          : Key{0, 0, 0, address, number};
  const decoder::MemoryReader read = reader_of(pid);
  if (auto found = known_.find(key);
      found != known_.end() && same_code(read, address, found->second))
    return found->second;
  const decoder::code::NoReturn no_return = [&](std::uint64_t function) {
    return no_return_.never_returns(read, maps, function);
  };
  return known_[key] =
             number == kReturn
                 ? decoder::analyse_return(read, address, no_return)
                 : decoder::analyse_liveness(read, address,
                                             arguments_of(number), no_return);
}

std::vector<ThreadLiveness::Frame>
ThreadLiveness::frames_of(pid_t pid, std::span<const decoder::Mapping> maps,
                          const decoder::ProcessImage &image,
                          const user_regs_struct &registers,
                          const decoder::Liveness &waiting) {
  std::vector<Frame> frames{{&waiting, registers.rsp}};
  auto file = code_file_at(maps, registers.rip);
  while (frames.size() <= kFrames && frames.back().code->return_slot) {
    const std::uint64_t slot =
        frames.back().rsp +
        static_cast<std::uint64_t>(*frames.back().code->return_slot);
    const auto address = decoder::word_at(image, slot);
    const auto caller = address ? code_file_at(maps, *address) : std::nullopt;
    if (!caller)
      break;
    // Code of another file cannot know what the function leaves alone
    // (the System V ABI): only the return values and the callee-saved
    // registers live past the return. In the same file a caller may keep
    // values in registers its callee leaves alone (GCC's -fipa-ra).
    if (file && *caller != *file)
      frames.back().kept = decoder::kAbiReturnLive;
    const decoder::Liveness &frame = analysed_at(pid, maps, *address, kReturn);
    if (!frame.analysed)
      break;
    frames.push_back({&frame, slot + 8}); // the `ret` pops the address
    file = caller;
  }
  return frames;
}

namespace {

// The registers live at a waiting thread: from the outermost function
// followed in to the one it waits in, what is live at each return.
std::uint32_t live_registers(std::span<const ThreadLiveness::Frame> frames) {
  return std::accumulate(
      frames.rbegin(), frames.rend(), decoder::kAllButStatusFlags,
      [](std::uint32_t live, const ThreadLiveness::Frame &frame) {
        return decoder::live_given(*frame.code, live & frame.kept);
      });
}

// Where the bytes the frames' code judges end: the first frame whose
// stack the analysis could not follow, the caller's frame of the last one
// followed (its code not followed), or the end of the stack when that one
// never returns, unless a thread's TLS lies in it (reached through fs,
// below the thread pointer).
std::uint64_t frames_top(std::span<const ThreadLiveness::Frame> frames,
                         std::uint64_t stack_end, bool holds_tls) {
  for (const auto &frame : frames)
    if (!frame.code->stack_live)
      return frame.rsp;
  const auto &last = frames.back();
  if (!last.code->returns)
    return holds_tls ? last.rsp : stack_end;
  if (!last.code->return_slot)
    return last.rsp;
  return std::min(stack_end,
                  last.rsp +
                      static_cast<std::uint64_t>(*last.code->return_slot) + 8);
}

// A thread's stack to judge: what its frames' code reads, as offsets from
// the stack pointer it waits with.
Watch watch_of(const StackParts &stack, const decoder::ProcessImage &image,
               std::span<const ThreadLiveness::Frame> frames) {
  const decoder::MemorySegment &segment = image.memory[stack.segment];
  const std::uint64_t end = segment.address + segment.bytes.size();
  const bool holds_tls =
      std::any_of(image.threads.begin(), image.threads.end(),
                  [&](const decoder::ThreadImage &thread) {
                    return thread.registers.fs_base - segment.address <
                           end - segment.address;
                  });
  Watch watch;
  watch.thread = stack.thread;
  watch.segment = stack.segment;
  watch.rsp = frames.front().rsp;
  watch.top = std::max(watch.rsp, frames_top(frames, end, holds_tls));
  watch.red_zone = frames.front().code->red_zone_read < decoder::kRedZone;
  watch.red_zone_reach = frames.front().code->reach.value_or(0);
  watch.red_zone_reach_above = frames.front().code->reach_above;
  for (const auto &frame : frames) {
    if (frame.rsp >= watch.top)
      break;
    watch.live.add(frame.code->stack_live->shifted(
        static_cast<std::int64_t>(frame.rsp - watch.rsp)));
    watch.reach = std::max(watch.reach, frame.code->reach.value_or(0));
    watch.reach_above = std::max(watch.reach_above, frame.code->reach_above);
  }
  return watch;
}

// Zeroes the frames' dead bytes; how many.
std::size_t zero_dead_frames(const Watch &watch,
                             decoder::MemorySegment &segment) {
  decoder::StackBytes dead;
  dead.add(0, static_cast<std::int64_t>(watch.top - watch.rsp));
  for (const auto &[from, to] : watch.live.spans())
    dead.remove(from, to);
  std::size_t count = 0;
  for (const auto &[from, to] : dead.spans()) {
    const std::uint64_t start = watch.rsp + static_cast<std::uint64_t>(from);
    if (start < segment.address ||
        start - segment.address >= segment.bytes.size())
      continue;
    const std::size_t at = start - segment.address;
    const std::size_t length = std::min<std::size_t>(
        static_cast<std::size_t>(to - from), segment.bytes.size() - at);
    std::fill_n(segment.bytes.begin() + static_cast<long>(at), length,
                std::byte{0});
    count += length;
  }
  return count;
}

// Moves the dead part of the red zone out of the stack segment.
std::size_t trim_red_zone(const Watch &watch, const decoder::Liveness &code,
                          decoder::ProcessImage &image,
                          const StackParts &stack) {
  decoder::MemorySegment &segment = image.memory[stack.segment];
  const std::uint64_t live = watch.rsp - code.red_zone_read;
  if (live <= segment.address)
    return 0;
  const std::size_t dead =
      std::min<std::uint64_t>(live - segment.address, segment.bytes.size());
  segment.bytes.erase(segment.bytes.begin(),
                      segment.bytes.begin() + static_cast<long>(dead));
  segment.address += dead;
  image.mapped[stack.dead].end = segment.address;
  return dead;
}

} // namespace

void ThreadLiveness::apply(pid_t pid, std::span<const decoder::Mapping> maps,
                           std::span<const StackParts> stacks,
                           decoder::ProcessImage &image) {
  std::vector<std::vector<Frame>> frames(image.threads.size());
  for (std::size_t t = 0; t < image.threads.size(); ++t) {
    decoder::ThreadImage &thread = image.threads[t];
    // Stopped in no system call: cmc cannot say what runs next.
    if (static_cast<long>(thread.registers.orig_rax) < 0)
      continue;
    const decoder::Liveness &waiting =
        analysed_at(pid, maps, thread.registers.rip,
                    static_cast<long>(thread.registers.orig_rax));
    if (!waiting.analysed)
      continue;
    frames[t] = frames_of(pid, maps, image, thread.registers, waiting);
    thread.dead = decoder::kEveryRegister & ~live_registers(frames[t]);
    image.dead_register_bytes +=
        kRegisterBytes *
        static_cast<std::size_t>(
            std::popcount(thread.dead & ((1U << decoder::kStatusFlags) - 1)));
  }
  std::vector<Watch> watches;
  std::vector<const StackParts *> parts;
  for (const StackParts &stack : stacks)
    if (!frames[stack.thread].empty()) {
      watches.push_back(watch_of(stack, image, frames[stack.thread]));
      parts.push_back(&stack);
    }
  scan_pointers(image, watches);
  for (std::size_t w = 0; w < watches.size(); ++w) {
    const Watch &watch = watches[w];
    image.dead_frame_bytes +=
        zero_dead_frames(watch, image.memory[watch.segment]);
    // Whatever the code after the wait does, a pointer into the red zone
    // lets the caller after the return, another thread or a signal
    // handler read it: the zone is dead only if none is there.
    if (watch.red_zone && !watch.red_zone_pointed)
      image.dead_red_zone_bytes += trim_red_zone(
          watch, *frames[watch.thread].front().code, image, *parts[w]);
  }
}

} // namespace cmc::tracer
