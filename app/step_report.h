#pragma once

#include <span>
#include <string>
#include <vector>

#include "search/property.h"
#include "tracer/syscall_trace.h"
#include "tracer/target_run.h"

namespace cmc::app {

// How replay and explore show what a step did.

// Each call on a line after indent, its backtrace frames below it.
void print_calls(const std::vector<tracer::TracedCall> &calls,
                 const char *indent);

// "  changed: cmc_state+1 01 -> 00" for each byte that changed.
void print_changes(const std::vector<search::RegionLayout> &layout,
                   std::span<const std::byte> before,
                   std::span<const std::byte> after);

// '  response: "OK\n"', or with several clients a line per client that
// received anything: '  response to A: "OK\n"'.
void print_responses(const tracer::TargetSpec &spec,
                     const std::vector<std::string> &received);

// "  read: 15 of 15 bytes of the message" (unless the target read it
// whole, when not always), and a line per connection the target closed:
// "  closed by the server: A (bytes it never read were dropped)".
void print_effects(const tracer::TargetSpec &spec,
                   const tracer::StepEffects &effects, bool always);

// "closed by the server" and the like, for a step line: "" if nothing.
[[nodiscard]] std::string effects_note(const tracer::TargetSpec &spec,
                                       const tracer::StepEffects &effects);

} // namespace cmc::app
