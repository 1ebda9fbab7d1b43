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
// before writing it (decoder::analyse_liveness): its dead registers are
// marked (hashed as zero), the dead part of its red zone is moved from
// its stack segment to the dead range below it. A thread not stopped in a
// system call, or whose code the analysis cannot follow, keeps all.
// Results are kept per code location (the file and offset of the waiting
// instruction, which stays with --aslr) and used again while the code
// read for them is the same. One per worker, as ProcessCapture.
class ThreadLiveness {
public:
  void apply(pid_t pid, std::span<const decoder::Mapping> maps,
             std::span<const StackParts> stacks, decoder::ProcessImage &image);

private:
  const decoder::Liveness &liveness_at(pid_t pid,
                                       std::span<const decoder::Mapping> maps,
                                       const user_regs_struct &registers);

  // (device major, minor, inode, offset or address, call number)
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t,
                         std::uint64_t, long>;
  std::map<Key, decoder::Liveness> known_;
};

} // namespace cmc::tracer
