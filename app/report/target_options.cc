#include "app/report/target_options.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/escape.h"
#include "util/fingerprint.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// A word the shell passes on unchanged, quoted if it needs to be.
std::string shell_quote(const std::string &word) {
  const bool plain =
      !word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                             "VWXYZ0123456789_-+=/.,:@%") == std::string::npos;
  if (plain)
    return word;
  std::string quoted = "'";
  for (const char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

} // namespace

Result<void> check_client_names(const std::vector<std::string> &clients) {
  for (auto name = clients.begin(); name != clients.end(); ++name) {
    if (name->empty() || name->find(':') != std::string::npos)
      return Error{fmt::format("--client '{}': a name is not empty and has "
                               "no ':'",
                               *name)};
    if (std::find(clients.begin(), name, *name) != name)
      return Error{fmt::format("--client {} is given twice: each client "
                               "needs a name of its own",
                               *name)};
  }
  return {};
}

std::string program_hash(const std::string &program) {
  std::ifstream file(program, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(file), {}};
  if (!file.good() && !file.eof())
    cannot_check(fmt::format("cannot read the program {}", program));
  return fingerprint_of(std::as_bytes(std::span(bytes))).hex();
}

nlohmann::json replay_json(const TargetOptions &options,
                           const std::string &program) {
  return {{"command", options.command},
          {"program_hash", program_hash(program)},
          {"clients", options.clients},
          {"regions", options.regions},
          {"invariant", options.invariant},
          {"forbid_response", options.forbid_response},
          {"properties", options.properties},
          {"seed", options.seed},
          {"port", options.port ? nlohmann::json(*options.port) : nullptr},
          {"aslr", options.aslr},
          {"crash", options.crash},
          {"writable", options.writable}};
}

std::string replay_command_line(const TargetOptions &options,
                                const std::vector<Step> &steps) {
  std::string line = "cmc replay";
  for (const std::string &client : options.clients)
    line += " --client " + shell_quote(client);
  for (const std::string &region : options.regions)
    line += " --region " + shell_quote(region);
  if (options.invariant != "none")
    line += " --invariant " + options.invariant;
  if (!options.forbid_response.empty())
    line += " --forbid-response " + shell_quote(options.forbid_response);
  for (const std::string &property : options.properties)
    line += " --property " + shell_quote(property);
  if (!options.tick.empty())
    line += " --tick " + options.tick;
  if (options.seed != 0)
    line += fmt::format(" --seed {}", options.seed);
  if (options.port)
    line += fmt::format(" --port {}", *options.port);
  if (options.aslr)
    line += " --aslr";
  if (options.crash)
    line += " --crash";
  for (const std::string &path : options.writable)
    line += " --writable " + shell_quote(path);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (!steps[i].preempt_at.empty())
      line += fmt::format(" --preempt {}:{}", i + 1,
                          fmt::join(steps[i].preempt_at, ","));
  line += " --steps";
  for (const Step &step : steps) {
    const std::string who = step.client.empty() ? "" : step.client + ":";
    if (step.kind == Step::Kind::kTick)
      line += " tick";
    else if (step.kind == Step::Kind::kCrash)
      line += " crash";
    else if (step.kind == Step::Kind::kDisconnect)
      line += " " + shell_quote(who + "disconnect");
    else
      line += " " + shell_quote(who + encode_escapes(step.message));
  }
  line += " --";
  for (const std::string &word : options.command)
    line += " " + shell_quote(word);
  return line;
}

} // namespace cmc::app
