#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/report/report.h"
#include "util/result.h"

namespace cmc::app {

// The options that name a target, its state and what to send it, shared by
// the commands that run one (check, replay), as the user gave them. A
// check's report keeps them (the "replay" object) for replay to read back.
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
  bool crash = false;                // --crash
  std::uint64_t seed = 0;
  std::vector<std::string> command; // PROGRAM [ARGS...]
};

// --client names: each one non-empty, without ':' (a --steps word is
// NAME:TEXT) and given once.
[[nodiscard]] Result<void>
check_client_names(const std::vector<std::string> &clients);

// The XXH3-128 of the program file, in hex: which build a report was
// made with. Throws UserError when the file cannot be read.
[[nodiscard]] std::string program_hash(const std::string &program);

// The "replay" object of a `cmc check --json` report: what `cmc replay
// --from` needs besides the counterexample, and which build of program
// (its path as resolved) the check ran.
[[nodiscard]] nlohmann::json replay_json(const TargetOptions &options,
                                         const std::string &program);

// The shell command that replays steps on the target of options.
[[nodiscard]] std::string replay_command_line(const TargetOptions &options,
                                              const std::vector<Step> &steps);

} // namespace cmc::app
