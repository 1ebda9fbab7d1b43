#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "app/report/trace_output.h"
#include "decoder/canonical_state.h"
#include "search/property.h"
#include "search/state_graph.h"
#include "tracer/control/target_run.h"
#include "tracer/syscalls/syscall_trace.h"

namespace cmc::app {

// How replay and explore show what a step did.

// Each call out shows on a line after indent (none in an -o file), its
// backtrace frames below it.
void print_calls(const std::vector<tracer::TracedCall> &calls,
                 const char *indent, const TraceOutput &out = {});

// A byte of a region that a step changed.
struct ByteChange {
  std::string region;
  std::size_t offset = 0; // in the region
  std::uint8_t before = 0;
  std::uint8_t after = 0;
};
// "cmc_state+1 01 -> 00".
[[nodiscard]] std::string change_text(const ByteChange &change);
// The changes named by the regions of layout that hold them.
[[nodiscard]] std::vector<ByteChange>
name_changes(const std::vector<search::RegionLayout> &layout,
             std::span<const search::ChangedByte> changes);
[[nodiscard]] std::vector<ByteChange>
changes_of(const std::vector<search::RegionLayout> &layout,
           std::span<const std::byte> before, std::span<const std::byte> after);

// For replay --json: [{"name": "write", "args": ["4", "\"OK\\n\"", "3"],
// "result": "3", "text": "write(...) = 3"}, ...], every call (-e does
// not filter them).
[[nodiscard]] nlohmann::json
calls_json(const std::vector<tracer::TracedCall> &calls);
// [{"region": "cmc_state", "offset": 1, "before": 1, "after": 0}, ...]
[[nodiscard]] nlohmann::json
changes_json(const std::vector<ByteChange> &changes);
// [{"client": "A", "bytes": "OK\n"}, ...]: what each client received (the
// client null with one unnamed client), the clients that received nothing
// left out.
[[nodiscard]] nlohmann::json
replies_json(const tracer::TargetSpec &spec,
             const std::vector<std::string> &received);

// A state as replay and explore name it when the state is the whole
// process: canonical, with its bytes, and its files.
struct ShownState {
  decoder::CanonicalState process;
  std::vector<executor::FileDigest> files;
};
// Whether spec's states are the whole process (kProcess, kRaw).
[[nodiscard]] bool whole_process(const tracer::TargetSpec &spec);
// The state of run now (a quiescent target), its heap hashed as spec says.
[[nodiscard]] Result<ShownState>
read_named_state(const tracer::TargetSpec &spec, const tracer::TargetRun &run,
                 tracer::ProcessCapture &capture);
// What changed from before to after, by name (decoder::describe_changes),
// then the files: "file ./journal written", "created", "removed".
[[nodiscard]] std::vector<std::string>
state_changes(const ShownState &before, const ShownState &after,
              std::size_t max_lines = 12);
// "  changed: .bss of kv: cmc_state+1 00 -> 01" for each line; "  changed:
// nothing" when none.
void print_state_changes(std::FILE *out, const std::vector<std::string> &lines);

// "  changed: cmc_state+1 01 -> 00" for each byte that changed.
void print_changes(std::FILE *out, const std::vector<ByteChange> &changes);

// '  response: "OK\n"', or with several clients a line per client that
// received anything: '  response to A: "OK\n"'.
void print_responses(std::FILE *out, const tracer::TargetSpec &spec,
                     const std::vector<std::string> &received);

// "  read: 15 of 15 bytes of the message" (unless the target read it
// whole, when not always), and a line per connection the target closed:
// "  closed by the server: A (bytes it never read were dropped)".
void print_effects(std::FILE *out, const tracer::TargetSpec &spec,
                   const executor::StepEffects &effects, bool always);

// "closed by the server" and the like, for a step line: "" if nothing.
[[nodiscard]] std::string effects_note(const tracer::TargetSpec &spec,
                                       const executor::StepEffects &effects);

} // namespace cmc::app
