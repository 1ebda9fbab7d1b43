// cmc: explores every order of a server's client messages (SPEC.md).

#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/cli/check_command.h"
#include "app/cli/explore_command.h"
#include "app/cli/interrupts.h"
#include "app/cli/replay_command.h"
#include "app/cli/scan_command.h"
#include "app/cli/simulate_command.h"
#include "app/cli/target_setup.h"
#include "app/plugins/plugin_server.h"
#include "app/version.h"
#include "util/user_error.h"

namespace {

// CLI11's message for a bad command line, as one line, with where to look:
// "--port: Value 0 not in range 1 to 65535 (see cmc check --help)". A
// word that is no command is named (CLI11 says "A subcommand is
// required").
std::string usage_error_line(const CLI::App &app,
                             const CLI::ParseError &error) {
  const std::vector<CLI::App *> parsed = app.get_subcommands();
  const CLI::App *command = parsed.empty() ? nullptr : parsed.front();
  std::string text = error.what();
  if (command == nullptr && !app.remaining().empty() &&
      !app.remaining().front().starts_with("-"))
    text = fmt::format("unknown command '{}': give check, simulate, scan, "
                       "replay or explore",
                       app.remaining().front());
  std::replace(text.begin(), text.end(), '\n', ' ');
  return fmt::format("{} (see cmc {}--help)", text,
                     command == nullptr ? "" : command->get_name() + " ");
}

// Everything after the first "--" is the target's command line, taken as
// it is: CLI11 would give "-p" of "-- server -p 80" to an option, or to a
// vector option before the "--". Returns it and leaves in args what is
// before.
std::vector<std::string> take_target_command(std::vector<char *> &args) {
  std::vector<std::string> command;
  if (const auto dashes = std::find_if(
          args.begin(), args.end(),
          [](const char *arg) { return std::string_view(arg) == "--"; });
      dashes != args.end()) {
    command.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  return command;
}

// The options of every command, as parsing fills them.
struct Options {
  cmc::app::CheckOptions check;
  cmc::app::SimulateOptions simulate;
  cmc::app::ScanOptions scan;
  cmc::app::ReplayOptions replay;
  cmc::app::TargetOptions explore;
  cmc::app::TraceOptions explore_trace;
};

// The commands, registered on the app.
struct Commands {
  CLI::App *check = nullptr;
  CLI::App *simulate = nullptr;
  CLI::App *scan = nullptr;
  CLI::App *replay = nullptr;
  CLI::App *explore = nullptr;
};

CLI::App *add_check(CLI::App &app, cmc::app::CheckOptions &options) {
  CLI::App *check = app.add_subcommand(
      "check", "Explore every order of the messages; report whether the "
               "invariant holds");
  check->footer(
      "Example:\n  cmc check -m 'SET a\\n' -m 'SET b\\n' --region cmc_state "
      "--invariant sticky -- ./kv 7000\n\nExit status: 0 holds, 1 violation "
      "found, 2 usage error, 3 could not check.");
  cmc::app::add_check_options(*check, options);
  return check;
}

CLI::App *add_simulate(CLI::App &app, cmc::app::SimulateOptions &options) {
  CLI::App *simulate = app.add_subcommand(
      "simulate", "Take random walks over check's steps, deeper than a "
                  "breadth-first search reaches; report the first violation, "
                  "minimised");
  simulate->footer(
      "Each walk starts from the initial state and takes up to --depth "
      "steps, each drawn uniformly among the messages (and --disconnect, "
      "--tick, --crash steps) allowed there, until a step breaks a "
      "property. The first violation (of the lowest-numbered walk) is "
      "minimised by dropping steps while it still fails, and printed as "
      "check prints a counterexample: cmc replay replays it. With no "
      "violation the verdict says how many walks and states it saw, never "
      "that every state was explored.\n\nExample:\n  cmc simulate --runs "
      "200 --depth 30 --client A -m 'LOCK\\n' -m 'UNLOCK\\n' --client B -m "
      "'LOCK\\n' -m 'UNLOCK\\n' --region held --invariant exclusive -- "
      "./lock_server_bug 7000\n\nExit status: 0 no violation found, 1 "
      "violation found, 2 usage error, 3 could not run.");
  cmc::app::add_simulate_options(*simulate, options);
  return simulate;
}

CLI::App *add_scan(CLI::App &app, cmc::app::ScanOptions &options) {
  CLI::App *scan = app.add_subcommand(
      "scan", "List the syscall, sysenter and int 0x80 instructions of a "
              "binary and of the libraries it loads (Capstone)");
  scan->footer(
      "Examples:\n  cmc scan ./kv\n  cmc scan --run -m 'SET a\\n' --json "
      "sites.json -- ./asm_kv 7000\n\nExit status: 0 scanned, 2 usage "
      "error, 3 could not scan or follow the program.");
  cmc::app::add_scan_options(*scan, options);
  return scan;
}

CLI::App *add_replay(CLI::App &app, cmc::app::ReplayOptions &options) {
  CLI::App *replay = app.add_subcommand(
      "replay", "Run a counterexample once and show, step by step, what the "
                "target did: its system calls, replies and region changes");
  replay->footer(
      "Examples:\n  cmc check --json report.json ... && cmc replay --from "
      "report.json\n  cmc replay --from report.json -- ./kv 7000   (a fixed "
      "build: \"does not reproduce\")\n  cmc replay --region cmc_state "
      "--invariant sticky --steps 'SET b\\n' 'SET a\\n' -- ./kv_bug "
      "7000\n\nExit status: 1 the violation shows, 0 it does not (also "
      "\"does not reproduce\": the report found it with another build or "
      "command), 2 usage error, 3 could not run (interrupted, or the "
      "report's own build no longer shows its violation: not "
      "deterministic).");
  cmc::app::add_replay_options(*replay, options);
  replay->get_option("--from")->type_name("REPORT.json");
  replay->get_option("--steps")->type_name("STEP");
  return replay;
}

CLI::App *add_explore(CLI::App &app, cmc::app::TargetOptions &options,
                      cmc::app::TraceOptions &trace) {
  CLI::App *explore = app.add_subcommand(
      "explore", "Start the target and take steps by hand, with catchpoints "
                 "on system calls, backtraces and going back");
  explore->footer(
      "Example:\n  cmc explore -m 'SET a\\n' --region cmc_state -- ./kv "
      "7000\n\nCommands are read from the terminal (history, tab "
      "completion) or, without one, line by line from stdin; 'help' lists "
      "them: send, disconnect, tick, preempt, state (the regions, or the "
      "whole process's live globals and heap chunks by name), diff [N [M]] "
      "(what the last step changed, or from the state after N steps to the "
      "one after M, by name), log, catch, delete, sites, back, reset, path, "
      "quit.\n\nExit status: 0 at 'quit' or the end of the input, 2 usage "
      "error, 3 could not start or follow the target.");
  cmc::app::add_explore_options(*explore, options, trace);
  return explore;
}

// cmc's own options and the commands with theirs, in the order --help
// lists them.
Commands add_commands(CLI::App &app, Options &options) {
  app.set_version_flag("--version",
                       fmt::format("cmc {}", cmc::app::kCmcVersion),
                       "Print cmc's version and exit");
  app.require_subcommand(1);
  app.footer("Example:\n  cmc check -m 'SET a\\n' -m 'SET b\\n' --region "
             "cmc_state --invariant sticky -- ./kv 7000\n\n'cmc COMMAND "
             "--help' explains a command. The JSON reports: "
             "docs/report-format.md.");
  Commands commands;
  commands.check = add_check(app, options.check);
  commands.simulate = add_simulate(app, options.simulate);
  commands.scan = add_scan(app, options.scan);
  commands.replay = add_replay(app, options.replay);
  commands.explore = add_explore(app, options.explore, options.explore_trace);
  return commands;
}

// After parsing: the target's command line to every command, each -m to
// its --client; throws UserError.
void finish_options(const Commands &commands, Options &options,
                    const std::vector<std::string> &command) {
  if (!command.empty()) {
    for (auto *target :
         {&options.check.target.command, &options.simulate.check.target.command,
          &options.scan.command, &options.replay.target.command,
          &options.explore.command})
      *target = command;
  }
  if (commands.check->parsed())
    cmc::app::assign_clients(*commands.check, options.check.target);
  if (commands.simulate->parsed())
    cmc::app::assign_clients(*commands.simulate, options.simulate.check.target);
  if (commands.replay->parsed())
    cmc::app::assign_clients(*commands.replay, options.replay.target);
  if (commands.explore->parsed())
    cmc::app::assign_clients(*commands.explore, options.explore);
}

// Runs the command parsed; returns its exit status, throws UserError.
int run_command(const Commands &commands, const Options &options) {
  if (commands.simulate->parsed())
    return cmc::app::run_simulate(options.simulate);
  if (commands.scan->parsed())
    return cmc::app::run_scan(options.scan);
  if (commands.replay->parsed())
    return cmc::app::run_replay(options.replay);
  if (commands.explore->parsed())
    return cmc::app::run_explore(options.explore, options.explore_trace);
  return cmc::app::run_check(options.check);
}

int run(int argc, char **argv) {
  std::vector<char *> before(argv, argv + argc);
  const std::vector<std::string> command = take_target_command(before);
  CLI::App app{"cmc: a model checker for unmodified Linux servers"};
  Options options;
  const Commands commands = add_commands(app, options);
  try {
    app.parse(static_cast<int>(before.size()), before.data());
  } catch (const CLI::ParseError &error) {
    if (error.get_exit_code() == 0)
      return app.exit(error); // --help, --version
    std::fprintf(stderr, "cmc: %s\n", usage_error_line(app, error).c_str());
    return static_cast<int>(cmc::ExitCode::kUsage);
  }
  try {
    finish_options(commands, options, command);
  } catch (const cmc::UserError &error) {
    std::fprintf(stderr, "cmc: %s\n", error.what());
    return static_cast<int>(error.code());
  }
  cmc::app::handle_interrupts();
  try {
    return run_command(commands, options);
  } catch (const cmc::UserError &error) {
    std::fprintf(stderr, "cmc: %s\n", error.what());
    return static_cast<int>(error.code());
  }
}

} // namespace

// What can fail in normal use is a Result or a UserError by now: an
// exception that reaches main is a bug of cmc, but for want of memory.
int main(int argc, char **argv) {
  // A descriptor 0-2 that cmc was started without would be taken by the
  // next file cmc opens, and the report written into it: each is held by
  // /dev/null, read-only, so a write to it fails (and --json - says so).
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDONLY) != fd)
      return static_cast<int>(cmc::ExitCode::kCannotCheck);
  // A property plugin's host (app/plugins/plugin_host.h), which cmc starts
  // itself: no command a user gives.
  if (argc == 3 && std::string_view(argv[1]) == "plugin-host")
    return cmc::app::run_plugin_server(argv[2]);
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fputs("cmc: out of memory\n", stderr);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "cmc: internal error (a bug of cmc): %s\n",
                 error.what());
  }
  return static_cast<int>(cmc::ExitCode::kCannotCheck);
}
