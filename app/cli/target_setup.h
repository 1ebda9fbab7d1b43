#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/report/target_options.h"
#include "search/property.h"
#include "tracer/control/target_run.h"
#include "util/result.h"

namespace cmc::app {

// From the TargetOptions to the run: the options registered on a command,
// the TargetSpec and the property they describe.

// An option of digits only, a value below 2^64: CLI11 reads "-1" into an
// unsigned option as 2^64-1 and 2^64 as 2^64-1 too (strtoull).
[[nodiscard]] CLI::Validator whole_number();

// A file to write, with or_stdout - (stdout) too; "" would silently mean
// none.
[[nodiscard]] CLI::Validator output_file(bool or_stdout);
// A --json value: a file or - (stdout).
[[nodiscard]] CLI::Validator json_file();

// --step-timeout SECONDS as a duration; throws UserError out of range
// (1 ms to a day; NaN and infinity too).
[[nodiscard]] std::chrono::milliseconds step_timeout(double seconds);

// Registers the TargetOptions on command (none of them required).
void add_target_options(CLI::App &command, TargetOptions &options);
// After parsing: gives each -m the --client before it; throws UserError
// for a -m before the first --client or a bad --client name.
void assign_clients(const CLI::App &command, TargetOptions &options);

// The run of the target that the options describe, but for what
// locate_program finds; throws UserError for bad input (a program that is
// not there, a bad --message).
[[nodiscard]] std::shared_ptr<tracer::TargetSpec>
target_spec(const TargetOptions &options);
// Runs the target once, to its first wait for a client, for the program
// it runs then (TargetSpec::program: a wrapper's command runs the server
// it execs), and resolves the regions, load base and entry in that
// program; throws UserError when the target does not get there or a
// region is unknown. After every other check of the options, which need
// no run.
void locate_program(tracer::TargetSpec &spec, const TargetOptions &options);
// The program that serves as the banners name it: "/usr/bin/beanstalkd
// (exec'd by /usr/bin/env)" after a wrapper.
[[nodiscard]] std::string program_name(const tracer::TargetSpec &spec);
// Both, for a command with no checks between.
[[nodiscard]] std::shared_ptr<tracer::TargetSpec>
located_target_spec(const TargetOptions &options);

// The property to check: the invariant, --forbid-response and the
// --property plugins; throws UserError for a bad regular expression or a
// plugin that cannot be loaded.
[[nodiscard]] std::unique_ptr<search::Property>
make_check_property(const TargetOptions &options,
                    const std::shared_ptr<const tracer::TargetSpec> &spec,
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
