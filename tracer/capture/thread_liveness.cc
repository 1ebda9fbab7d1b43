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

const decoder::Mapping *mapping_at(std::span<const decoder::Mapping> maps,
                                   std::uint64_t address) {
  const auto found = std::upper_bound(
      maps.begin(), maps.end(), address,
      [](std::uint64_t a, const decoder::Mapping &m) { return a < m.start; });
  if (found == maps.begin() || address >= std::prev(found)->end)
    return nullptr;
  return &*std::prev(found);
}

// The file of an executable mapping at address, as (device, inode).
std::optional<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>>
code_file_at(std::span<const decoder::Mapping> maps, std::uint64_t address) {
  const decoder::Mapping *mapping = mapping_at(maps, address);
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

// A red zone that pointers may reach (RedZoneWindow), and the bytes of
// the zone itself, which the scan skips: a pointer there is read only
// through a pointer into it.
struct Window {
  std::size_t thread = 0;
  decoder::RedZoneWindow addresses;
  std::uint64_t zone_start = 0;
  std::uint64_t zone_end = 0;
  bool pointed_to = false;
};

void scan_registers(const decoder::ProcessImage &image,
                    std::span<Window> windows) {
  for (std::size_t t = 0; t < image.threads.size(); ++t) {
    user_regs_struct live = decoder::without_dead(image.threads[t].registers,
                                                  image.threads[t].dead);
    for (Window &window : windows) {
      user_regs_struct words = live;
      if (window.thread == t)
        words.rsp = 0; // the analysis follows every use of rsp
      std::array<std::uint64_t, sizeof words / 8> values{};
      std::memcpy(values.data(), &words, sizeof words);
      window.pointed_to |=
          std::any_of(values.begin(), values.end(), [&](std::uint64_t value) {
            return window.addresses.holds(value);
          });
    }
  }
}

void scan_memory(const decoder::ProcessImage &image,
                 std::span<Window> windows) {
  for (const decoder::MemorySegment &segment : image.memory) {
    const std::uint64_t first = (segment.address + 7) & ~std::uint64_t{7};
    const std::uint64_t end = segment.address + segment.bytes.size();
    for (std::uint64_t at = first; at + 8 <= end; at += 8) {
      std::uint64_t value = 0;
      std::memcpy(&value, segment.bytes.data() + (at - segment.address), 8);
      for (Window &window : windows)
        if (window.addresses.holds(value) &&
            (at < window.zone_start || at >= window.zone_end))
          window.pointed_to = true;
    }
  }
}

} // namespace

const decoder::Liveness &
ThreadLiveness::analysed_at(pid_t pid, std::span<const decoder::Mapping> maps,
                            std::uint64_t address, long number) {
  const decoder::Mapping *mapping = mapping_at(maps, address);
  const Key key =
      mapping != nullptr && mapping->inode != 0
          ? Key{mapping->dev_major, mapping->dev_minor, mapping->inode,
                address - mapping->start + mapping->offset, number}
          : Key{0, 0, 0, address, number};
  const decoder::MemoryReader read = reader_of(pid);
  if (auto found = known_.find(key);
      found != known_.end() && same_code(read, address, found->second))
    return found->second;
  return known_[key] = number == kReturn
                           ? decoder::analyse_return(read, address)
                           : decoder::analyse_liveness(read, address,
                                                       arguments_of(number));
}

std::uint32_t ThreadLiveness::live_registers(
    pid_t pid, std::span<const decoder::Mapping> maps,
    const decoder::ProcessImage &image, const user_regs_struct &registers,
    const decoder::Liveness &waiting) {
  // The functions on the stack from the one the thread waits in, each
  // returning to the next, as far as their code can be followed, with
  // the registers that may be live past each one's return.
  struct Frame {
    const decoder::Liveness *code;
    std::uint32_t kept = decoder::kEveryRegister;
  };
  std::vector<Frame> frames{{&waiting}};
  std::uint64_t rsp = registers.rsp;
  auto file = code_file_at(maps, registers.rip);
  while (frames.size() <= kFrames && frames.back().code->return_slot) {
    rsp += static_cast<std::uint64_t>(*frames.back().code->return_slot);
    const auto address = decoder::word_at(image, rsp);
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
    frames.push_back({&frame});
    rsp += 8; // the `ret` pops the return address
    file = caller;
  }
  // From the outermost function followed in to the one the thread waits
  // in, what is live at each return.
  return std::accumulate(
      frames.rbegin(), frames.rend(), decoder::kAllButStatusFlags,
      [](std::uint32_t live, const Frame &frame) {
        return decoder::live_given(*frame.code, live & frame.kept);
      });
}

void ThreadLiveness::apply(pid_t pid, std::span<const decoder::Mapping> maps,
                           std::span<const StackParts> stacks,
                           decoder::ProcessImage &image) {
  std::vector<const decoder::Liveness *> found(image.threads.size());
  for (std::size_t t = 0; t < image.threads.size(); ++t) {
    decoder::ThreadImage &thread = image.threads[t];
    // Stopped in no system call: cmc cannot say what runs next.
    if (static_cast<long>(thread.registers.orig_rax) < 0)
      continue;
    found[t] = &analysed_at(pid, maps, thread.registers.rip,
                            static_cast<long>(thread.registers.orig_rax));
    if (!found[t]->analysed)
      continue;
    thread.dead =
        decoder::kEveryRegister &
        ~live_registers(pid, maps, image, thread.registers, *found[t]);
    image.dead_register_bytes +=
        kRegisterBytes *
        static_cast<std::size_t>(
            std::popcount(thread.dead & ((1U << decoder::kStatusFlags) - 1)));
  }
  std::vector<Window> windows;
  for (const StackParts &stack : stacks) {
    const decoder::Liveness *liveness = found[stack.thread];
    if (liveness == nullptr || liveness->red_zone_read >= decoder::kRedZone)
      continue;
    // Whatever the code after the wait does, a pointer into the red zone
    // lets the caller after the return, another thread or a signal
    // handler read it: the zone is dead only if none is there.
    const std::uint64_t rsp = image.threads[stack.thread].registers.rsp;
    windows.push_back({stack.thread, decoder::red_zone_window(*liveness, rsp),
                       rsp - decoder::kRedZone, rsp, false});
  }
  scan_registers(image, windows);
  scan_memory(image, windows);
  for (const StackParts &stack : stacks) {
    const decoder::Liveness *liveness = found[stack.thread];
    if (liveness == nullptr || liveness->red_zone_read >= decoder::kRedZone ||
        std::any_of(windows.begin(), windows.end(), [&](const Window &w) {
          return w.thread == stack.thread && w.pointed_to;
        }))
      continue;
    decoder::MemorySegment &segment = image.memory[stack.segment];
    const std::uint64_t live =
        image.threads[stack.thread].registers.rsp - liveness->red_zone_read;
    if (live <= segment.address)
      continue;
    const std::size_t dead =
        std::min<std::uint64_t>(live - segment.address, segment.bytes.size());
    segment.bytes.erase(segment.bytes.begin(),
                        segment.bytes.begin() + static_cast<long>(dead));
    segment.address += dead;
    image.mapped[stack.dead].end = segment.address;
    image.dead_red_zone_bytes += dead;
  }
}

} // namespace cmc::tracer
