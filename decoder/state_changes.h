#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "decoder/canonical_state.h"

namespace cmc::decoder {

// What changed from before to after, two canonical states of one run with
// their kept bytes, by name, a line each:
//   ".bss of kv: cmc_state+1 00 -> 01"           a global by data object
//   ".data of x: name+0 \"ab\" -> \"ac\""          a run of text as text
//   "heap chunk 3 (32 B) allocated: 0 \"b\""     with its first bytes
//   "heap chunk 2 (32 B) freed: ..."
//   "heap chunk 1+8: pointer to chunk 2 -> null"
//   "fd 5 opened: socket", "fd 5 closed: socket", "fd 5 position 0 -> 12"
//   "stack of thread 1: 24 bytes changed"
// A chunk is the same chunk in both when its address is (its number may
// differ); a pointer is shown as what it points to. The registers are
// named (".. of thread 1: rax, rcx") only when no other line changed. At
// most max_lines lines, the last "and N more changes".
[[nodiscard]] std::vector<std::string>
describe_changes(const CanonicalState &before, const CanonicalState &after,
                 std::size_t max_lines = 12);

// One state as TLC prints one: the program's live (non-zero) globals by
// data object ("cells = &chunk 1"), its heap chunks with their first
// bytes, its descriptors, and how many live globals each library has. At
// most max_lines lines, the last "and N more".
[[nodiscard]] std::vector<std::string>
describe_state(const CanonicalState &state, std::size_t max_lines = 40);

} // namespace cmc::decoder
