#pragma once

#include <cstdint>
#include <optional>

#include "decoder/code_graph.h"
#include "decoder/stack_bytes.h"

namespace cmc::decoder {

// What code may read of the stack before writing it, from where it starts
// to the return of its function.
struct StackReads {
  // The bytes, as offsets from rsp at the start; none when the analysis
  // gave up (rsp moved in a way it does not follow, an access through
  // rsp and an index register): every byte may be read.
  std::optional<StackBytes> live;
  // The code (or a call it makes, or the kernel for a system call) reads
  // memory through a pointer it did not compute from rsp, at most reach
  // bytes below it and reach_above bytes above.
  std::optional<std::uint64_t> reach;
  std::uint64_t reach_above = 0;
};

// A dataflow analysis of the code's stack accesses, rsp followed as an
// offset from its value at start. Bytes read through rsp are live until
// written through it. An address the code computes from rsp is followed
// through registers and stack slots; where it reaches what cmc does not
// see (a call, the kernel, memory elsewhere) the bytes at and above the
// lowest such address are live: a function given a pointer into a frame
// reads the object there, which lies at and above its start, as the C
// library's functions do. after_call: the code starts where a call
// returns, so the stack arguments of the calls it makes are written after
// it starts (they belong to the callee, which may change them); otherwise
// a call may read the function's frame below return_slot (the offset of
// its return address from rsp at start, none when not known).
[[nodiscard]] StackReads stack_reads(const code::Graph &graph,
                                     std::uint64_t start, bool after_call,
                                     std::optional<std::int64_t> return_slot);

} // namespace cmc::decoder
