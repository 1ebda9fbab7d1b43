#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "decoder/proc_maps.h"
#include "decoder/syscall_format.h"

namespace cmc::tracer {

// Which functions a call never returns from: the C library's that end the
// process or jump elsewhere (exit, abort, __stack_chk_fail, err,
// longjmp, ...; not those that unwind frames, whose unwinder reads them:
// pthread_exit, C++'s throw). A call through the PLT is followed to the
// function its GOT slot holds (cmc binds them at start, LD_BIND_NOW). The
// liveness analysis stops there, where it followed the code after the
// call (another function's, or padding) and gave up. One per worker.
class NoReturnCalls {
public:
  [[nodiscard]] bool never_returns(const decoder::MemoryReader &read,
                                   std::span<const decoder::Mapping> maps,
                                   std::uint64_t address);

private:
  // By (device major, minor, inode): the file offsets of such functions.
  using File = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>;
  const std::set<std::uint64_t> &of_file(const decoder::Mapping &mapping);
  std::map<File, std::set<std::uint64_t>> files_;
};

} // namespace cmc::tracer
