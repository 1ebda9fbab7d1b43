#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoder/symbol.h"

namespace cmc::decoder {

// What a piece of the target's writable memory is.
enum class MemoryKind {
  kData,      // a file's writable mapping: .data, .bss (named by section)
  kAnonymous, // anonymous memory: mmap'd blocks, the main thread's TLS
  kHeap,      // [heap], the brk area malloc's main arena lives in
  kStack,     // a thread's live stack: its stack pointer less the live part
              // of the 128-byte red zone, up to the end of the mapping
};

// Bytes of the target's memory as read at a quiescent point. Pages the
// kernel has never backed read as zero without being read.
struct MemorySegment {
  std::string name; // ".bss of beanstalkd", "[heap]", "stack of thread 1"
  MemoryKind kind = MemoryKind::kAnonymous;
  std::uint64_t address = 0; // of bytes[0] in the target
  std::vector<std::byte> bytes;
  // Of a section of a file: the file's data objects by link-time address
  // (shared by every capture), and the link-time address of bytes[0].
  std::shared_ptr<const std::vector<Symbol>> symbols{};
  std::uint64_t link_address = 0;
};

// A mapping that is not read but that pointers may point into (code,
// read-only data, a stack below its stack pointer): a pointer into it is
// hashed as (mapping, offset).
struct MappedRange {
  std::string name;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  // The offset is counted down from end: a stack's dead part, whose
  // addresses move with the stack pointer (the kernel puts the main
  // thread's stack pointer at a random offset in its page with ASLR).
  bool from_end = false;
};

// One thread of the target, numbered in the order its id sorts (the order
// the target created its threads in).
struct ThreadImage {
  std::uint32_t id = 0; // the kernel's thread id, which differs per run
  user_regs_struct registers{};
  // The registers no code reads before writing them, hashed as zero
  // (decoder::Liveness::dead).
  std::uint32_t dead = 0;
};

// One open descriptor, as /proc/PID/fd and fdinfo show it; what differs
// per run (inode numbers) is left out.
struct DescriptorImage {
  int fd = -1;
  // "file /path/as/the/target/named/it", "socket", "pipe", "eventpoll",
  // "eventfd", "timerfd", "signalfd", "/dev/null", ...
  std::string kind;
  std::uint32_t flags = 0;    // fdinfo "flags" (octal there)
  std::uint64_t position = 0; // fdinfo "pos"
  // For a TCP socket: the client it is connected to (index into the
  // search's clients), kListening, or kOther.
  static constexpr int kListening = -2;
  static constexpr int kOther = -1;
  int client = kOther;
  // For an eventpoll: each registration as (target fd, events, data),
  // sorted by target fd; data is often a pointer and hashed as one.
  std::vector<std::uint64_t> watches;
};

// Everything cmc reads of a quiescent target to tell its state: the
// writable memory of every mapping, the threads, the descriptors.
// Segments are sorted by address and do not overlap.
struct ProcessImage {
  std::vector<MemorySegment> memory;
  std::vector<MappedRange> mapped; // read-only mappings, by address
  std::vector<ThreadImage> threads;
  std::vector<DescriptorImage> descriptors; // by fd
  // The GOT words of R_X86_64_JUMP_SLOT relocations that lie in memory,
  // sorted: a PLT stub's address until ld.so binds the function lazily at
  // its first call, the function's after. Either way a call through the
  // slot reaches the same function, so the word is no state.
  std::vector<std::uint64_t> plt_slots;
  std::uint32_t pid = 0;
  // What reading cost: bytes copied out of the target.
  std::size_t bytes_read = 0;
  // What liveness left out: the bytes of dead registers and of the dead
  // parts of the stacks' red zones,
  std::size_t dead_register_bytes = 0;
  std::size_t dead_red_zone_bytes = 0;
  // And of the frames above the stack pointers, hashed as zero.
  std::size_t dead_frame_bytes = 0;
};

// The 8-byte word of image's memory at a target address, where it was
// read (segments by address).
[[nodiscard]] std::optional<std::uint64_t> word_at(const ProcessImage &image,
                                                   std::uint64_t address);

// glibc's pointer guard (tcbhead_t.pointer_guard at fs:0x30, the same in
// every thread, from AT_RANDOM): PTR_MANGLE stores a pointer p as
// rol(p ^ guard, 17), in setjmp's buffers (one in every thread's
// start_thread frame), atexit's list, ...
[[nodiscard]] std::optional<std::uint64_t>
pointer_guard(const ProcessImage &image);

// The pointer a word holds mangled by the pointer guard (PTR_DEMANGLE).
[[nodiscard]] inline std::uint64_t demangled(std::uint64_t word,
                                             std::uint64_t guard) {
  constexpr int kRotation = 17;
  return ((word >> kRotation) | (word << (64 - kRotation))) ^ guard;
}

} // namespace cmc::decoder
