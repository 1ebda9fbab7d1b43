#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "decoder/liveness.h"
#include "decoder/proc_maps.h"
#include "decoder/process_image.h"
#include "tracer/capture/noreturn_calls.h"

namespace cmc::tracer {

// A thread's live stack in a captured image: the memory segment that
// starts at (or above) its red zone, and the range of its dead part below,
// whose end moves up with the segment's start.
struct StackParts {
  std::size_t thread = 0;
  std::size_t segment = 0; // in ProcessImage::memory
  std::size_t dead = 0;    // in ProcessImage::mapped
};

// Leaves out of a captured image what no code of a waiting thread reads
// before writing it (decoder::analyse_liveness, and analyse_return for
// the functions it returns to, up to 8 of them): its dead registers are
// marked (hashed as zero), the dead part of its red zone is moved from
// its stack segment to the dead range below it. A thread not stopped in a
// system call, or whose code the analysis cannot follow, keeps all.
// Results are kept per code location (the file and offset of the waiting
// instruction or the return address, which stay with --aslr) and used again
// while the code read for them is the same. One per worker, as ProcessCapture.
class ThreadLiveness {
public:
  void apply(pid_t pid, std::span<const decoder::Mapping> maps,
             std::span<const StackParts> stacks, decoder::ProcessImage &image);

  // A function on a waiting thread's stack: its code's liveness from
  // where it continues, rsp there, and the registers that may be live
  // past its return.
  struct Frame {
    const decoder::Liveness *code = nullptr;
    std::uint64_t rsp = 0;
    std::uint32_t kept = decoder::kEveryRegister;
  };

private:
  // The call number of code a function returns to (analyse_return).
  static constexpr long kReturn = -1;
  // The liveness of the code at address: a thread waiting there in call
  // number, or a function returning there (kReturn).
  const decoder::Liveness &analysed_at(pid_t pid,
                                       std::span<const decoder::Mapping> maps,
                                       std::uint64_t address, long number);
  // The functions on the stack from the one the thread waits in, each
  // returning to the next, as far as their code can be followed.
  std::vector<Frame> frames_of(pid_t pid,
                               std::span<const decoder::Mapping> maps,
                               const decoder::ProcessImage &image,
                               const user_regs_struct &registers,
                               const decoder::Liveness &waiting);

  // (device major, minor, inode, offset or address, call number or
  // kReturn)
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t,
                         std::uint64_t, long>;
  std::map<Key, decoder::Liveness> known_;
  NoReturnCalls no_return_;
};

} // namespace cmc::tracer
