#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "executor/sources.h"
#include "tracer/process/tracee.h"
#include "tracer/syscalls/site_log.h"
#include "util/result.h"

namespace cmc::tracer {

// One run of a program that stops on every system call (`cmc scan --run`).
struct SiteRunSpec {
  LaunchSpec launch; // observe and netns are set by run_for_sites
  // Sent in order over one connection once the program waits for input.
  std::vector<std::string> messages;
  std::uint64_t seed = 0;
  std::chrono::milliseconds step_timeout{10000};
};

// What the run executed, up to where it ended.
struct SiteRun {
  std::vector<ObservedSite> sites;
  executor::Sources sources;
  std::size_t messages_sent = 0;
  // How the program ended; nothing: it waited for input and was killed.
  std::optional<executor::Fault> fault;
  // Why cmc stopped following it early (then the rest is what it saw up
  // to there), or "".
  std::string error;
  // The program it ran last, the one a wrapper exec'd (its /proc/PID/exe);
  // "" when it had ended before cmc could ask.
  std::string program;
};

// Runs the program under the tracer with cmc's usual control of time and
// randomness until it exits, or waits for input with every message sent.
// Fails only when the program cannot be started.
[[nodiscard]] Result<SiteRun> run_for_sites(const SiteRunSpec &spec);

} // namespace cmc::tracer
