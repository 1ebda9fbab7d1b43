#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/property.h"
#include "tracer/target_run.h"
#include "util/result.h"

namespace cmc::app {

// The options that name a target, its state and what to send it, shared by
// the commands that run one (check, replay), as the user gave them.
struct TargetOptions {
  std::vector<std::string> messages; // C escapes not yet decoded
  // --client NAME, in order, and the client of each message (the last
  // --client before its -m); both empty without --client.
  std::vector<std::string> clients;
  std::vector<std::size_t> message_clients;
  bool disconnect = false;
  std::vector<std::string> regions;
  std::string invariant = "none";
  std::string forbid_response;         // a regular expression; "" none
  std::vector<std::string> properties; // --property plugins, absolute paths
  bool aslr = false;
  std::optional<std::uint16_t> port;
  double step_timeout_s = 10;
  bool show_output = false;
  std::vector<std::string> writable; // --writable PATH
  std::string tick;                  // "" none
  std::uint64_t seed = 0;
  std::vector<std::string> command; // PROGRAM [ARGS...]
};

// An option of digits only, a value below 2^64: CLI11 reads "-1" into an
// unsigned option as 2^64-1 and 2^64 as 2^64-1 too (strtoull).
[[nodiscard]] CLI::Validator whole_number();

// A file to write, with or_stdout - (stdout) too; "" would silently mean
// none.
[[nodiscard]] CLI::Validator output_file(bool or_stdout);
// A --json value: a file or - (stdout).
[[nodiscard]] CLI::Validator json_file();

// --client names: each one non-empty, without ':' (a --steps word is
// NAME:TEXT) and given once.
[[nodiscard]] Result<void>
check_client_names(const std::vector<std::string> &clients);

// --step-timeout SECONDS as a duration; throws UserError out of range
// (1 ms to a day; NaN and infinity too).
[[nodiscard]] std::chrono::milliseconds step_timeout(double seconds);

// Registers the TargetOptions on command (none of them required).
void add_target_options(CLI::App &command, TargetOptions &options);
// After parsing: gives each -m the --client before it; throws UserError
// for a -m before the first --client or a bad --client name.
void assign_clients(const CLI::App &command, TargetOptions &options);

// The run of the target that the options describe; throws UserError for
// bad input (an unknown symbol, a program that is not there).
[[nodiscard]] std::shared_ptr<tracer::TargetSpec>
target_spec(const TargetOptions &options);

// The property to check: the invariant, --forbid-response and the
// --property plugins; throws UserError for a bad regular expression or a
// plugin that cannot be loaded.
[[nodiscard]] std::unique_ptr<search::Property>
make_check_property(const TargetOptions &options,
                    std::shared_ptr<const tracer::TargetSpec> spec,
                    const std::vector<search::RegionLayout> &layout);

// Where each region lies in the state's bytes.
[[nodiscard]] std::vector<search::RegionLayout>
layout_of(const std::vector<decoder::Region> &regions);

// PROGRAM as execvp would find it: a path with a slash as it is, a bare
// name through PATH.
[[nodiscard]] std::string resolve_program(const std::string &program);

// The --message texts with their C escapes decoded.
[[nodiscard]] std::vector<std::string>
decode_messages(const std::vector<std::string> &texts);

} // namespace cmc::app
