#include "app/cli/target_setup.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "app/plugins/property_plugin.h"
#include "decoder/elf_file.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

std::vector<decoder::RegionSpec> parse_regions(const TargetOptions &options) {
  std::vector<decoder::RegionSpec> specs;
  for (const std::string &text : options.regions) {
    auto spec = decoder::parse_region_spec(text);
    if (!spec)
      usage(spec.error().message);
    specs.push_back(std::move(*spec));
  }
  return specs;
}

std::vector<decoder::Region> resolve_regions(const TargetOptions &options,
                                             const decoder::ElfFile &elf) {
  std::vector<decoder::Region> regions;
  for (const decoder::RegionSpec &spec : parse_regions(options)) {
    auto region = decoder::resolve_region(spec, elf);
    if (!region)
      cannot_check(region.error().message);
    regions.push_back(std::move(*region));
  }
  return regions;
}

// Relative paths stay inside the run's working directory; absolute ones
// must exist to be mounted over.
std::vector<std::string> check_writable(const std::vector<std::string> &paths) {
  std::vector<std::string> checked;
  for (const std::string &text : paths) {
    const std::filesystem::path path =
        std::filesystem::path(text).lexically_normal();
    if (path.empty() || path == "." || *path.begin() == "..")
      usage(fmt::format("--writable {}: a relative path must name something "
                        "inside the working directory",
                        text));
    if (path.is_absolute() && !std::filesystem::exists(path))
      cannot_check(fmt::format("--writable {}: no such file or directory "
                               "(an absolute path must exist)",
                               text));
    checked.push_back(path.string());
  }
  return checked;
}

} // namespace

CLI::Validator whole_number() {
  return {[](std::string &text) -> std::string {
            std::uint64_t value = 0;
            const auto [end, error] =
                std::from_chars(text.data(), text.data() + text.size(), value);
            if (text.empty() || text.front() == '-' || error != std::errc() ||
                end != text.data() + text.size())
              return fmt::format("'{}' is not a whole number from 0 to "
                                 "18446744073709551615",
                                 text);
            return "";
          },
          "", ""};
}

CLI::Validator output_file(bool or_stdout) {
  return {[or_stdout](std::string &text) -> std::string {
            const std::string give =
                or_stdout ? "give a file, or - for stdout" : "give a file";
            if (text.empty())
              return "an empty value: " + give;
            // `--json= --region X` gives "--region" as the file.
            if (text.starts_with("-") && !(or_stdout && text == "-"))
              return "'" + text + "' looks like an option: " + give;
            return "";
          },
          "", ""};
}

CLI::Validator json_file() { return output_file(true); }

std::chrono::milliseconds step_timeout(double seconds) {
  auto timeout = timeout_of_seconds(seconds);
  if (!timeout)
    usage("bad --step-timeout: " + timeout.error().message);
  return *timeout;
}

namespace {

// What the clients send, and from which connection.
void add_client_options(CLI::App &command, TargetOptions &options) {
  command
      .add_option("-m,--message", options.messages,
                  "One client message (repeatable); C escapes \\n \\r "
                  "\\t \\\\ \\xHH are decoded. Tried in the order "
                  "given.")
      ->type_name("MESSAGE");
  command
      .add_option("--client", options.clients,
                  "Start a client NAME (repeatable): the -m after it are "
                  "its messages, sent on a connection of its own opened "
                  "at its first message")
      ->type_name("NAME");
  command.add_flag("--disconnect", options.disconnect,
                   "With --client: add, per client, the step 'this client "
                   "closes its connection'");
}

// The state read after every step and the properties checked on it.
void add_property_options(CLI::App &command, TargetOptions &options) {
  command
      .add_option("--region", options.regions,
                  "State to read after every step (repeatable): SYMBOL, "
                  "SYMBOL:LEN or SYMBOL+OFF:LEN, from .symtab or .dynsym")
      ->type_name("SYMBOL[+OFF][:LEN]");
  command
      .add_option("--invariant", options.invariant,
                  "Property checked on every transition: sticky (no "
                  "non-zero byte becomes zero), exclusive (at most one byte "
                  "is non-zero) or none. Crashes, exits and hangs during a "
                  "step are always violations.")
      ->type_name("NAME")
      ->check(CLI::IsMember({"sticky", "exclusive", "none"}));
  command
      .add_option("--forbid-response", options.forbid_response,
                  "A violation for any reply of the target that matches "
                  "REGEX (ECMAScript, anywhere in the bytes of a step)")
      ->type_name("REGEX");
  command
      .add_option("--property", options.properties,
                  "A property plugin (repeatable): a shared object built "
                  "against cmc/property.h, called with the whole path of "
                  "every new transition (see README, 'Property plugins')")
      ->type_name("PLUGIN.so")
      ->transform([](const std::string &path) {
        return std::filesystem::absolute(path).string();
      });
}

// How the target runs: its address space, port, time limit, output and
// the files it may write.
void add_run_options(CLI::App &command, TargetOptions &options) {
  command.add_flag("--aslr", options.aslr,
                   "Leave the target's address-space randomisation on");
  command
      .add_option("--port", options.port,
                  "Connect to 127.0.0.1:PORT instead of the address the "
                  "target listens on")
      ->type_name("PORT")
      ->check(CLI::Range(1, 65535).description(""));
  command
      .add_option("--step-timeout", options.step_timeout_s,
                  "Seconds a step may take before the target counts as "
                  "hung (default 10, at most 86400; 0.5 is half a second)")
      ->type_name("SECONDS");
  command.add_flag("--show-output", options.show_output,
                   "Let the target write to cmc's stdout and stderr");
  command
      .add_option(
          "--writable", options.writable,
          "A path the target may write besides its working directory "
          "(repeatable): each run gets a private copy of it as it is when the "
          "run starts. Relative: in the run's working directory, copied from "
          "cmc's (an empty directory if it does not exist there); absolute: "
          "must exist, mounted over in a mount namespace of the run's own. "
          "Other writes stop the check naming the path.")
      ->type_name("PATH");
}

// The target's virtual time and randomness.
void add_environment_options(CLI::App &command, TargetOptions &options) {
  command
      .add_option("--tick", options.tick,
                  "Add the step 'advance the target's virtual clock by "
                  "DURATION' (10s, 250ms, ...) to the alphabet, tried "
                  "after the messages; waits and timers whose deadline it "
                  "passes fire")
      ->type_name("DURATION");
  command.add_flag(
      "--crash", options.crash,
      "Add the step 'crash the machine and restart the target' to the "
      "alphabet, tried last: every process of the target is killed "
      "(SIGKILL), each file it wrote reverts to what it held at its last "
      "fsync, fdatasync, sync_file_range(WAIT_AFTER), msync(MS_SYNC), sync "
      "or O_SYNC/O_DSYNC write (a file never synced, in a directory never "
      "synced, is gone), and the same command starts again on them; "
      "clients' connections close, their next message connects again");
  command
      .add_option("--seed", options.seed,
                  "Seed of getrandom, /dev/urandom and AT_RANDOM (default "
                  "0)")
      ->type_name("N")
      ->check(whole_number());
}

} // namespace

void add_target_options(CLI::App &command, TargetOptions &options) {
  add_client_options(command, options);
  add_property_options(command, options);
  add_run_options(command, options);
  add_environment_options(command, options);
  command.add_option("command", options.command, "-- PROGRAM [ARGS...]")
      ->type_name("");
}

void assign_clients(const CLI::App &command, TargetOptions &options) {
  options.message_clients.clear();
  if (auto names = check_client_names(options.clients); !names)
    usage(names.error().message);
  if (options.clients.empty()) {
    if (options.disconnect)
      usage("--disconnect needs --client");
    return;
  }
  std::optional<std::size_t> client;
  for (const CLI::Option *option : command.parse_order()) {
    if (option->check_lname("client"))
      client = client ? *client + 1 : 0;
    else if (option->check_lname("message") && !client)
      usage("with --client, every -m follows the --client it belongs to");
    else if (option->check_lname("message"))
      options.message_clients.push_back(*client);
  }
}

std::shared_ptr<tracer::TargetSpec> target_spec(const TargetOptions &options) {
  if (options.command.empty())
    usage("give the target: -- PROGRAM [ARGS...]");
  auto spec = std::make_shared<tracer::TargetSpec>();
  spec->launch.program = resolve_program(options.command.front());
  spec->launch.argv = options.command;
  spec->launch.aslr = options.aslr;
  spec->launch.show_output = options.show_output;
  spec->launch.writable = check_writable(options.writable);
  // Bad --region text is a usage error before any run (locate_program).
  parse_regions(options);
  // The state is the regions, or without any the whole process (check's
  // default), until --dedup chooses.
  spec->state = options.regions.empty() ? executor::StateKind::kProcess
                                        : executor::StateKind::kRegions;
  spec->messages = decode_messages(options.messages);
  spec->clients = options.clients;
  spec->client_of = options.message_clients;
  spec->disconnect = options.disconnect;
  spec->crash = options.crash;
  spec->launch.durable = options.crash;
  spec->seed = options.seed;
  if (!options.tick.empty()) {
    auto tick = parse_duration(options.tick);
    if (!tick)
      usage("bad --tick " + tick.error().message);
    spec->tick = *tick;
  }
  spec->port = options.port;
  spec->step_timeout = step_timeout(options.step_timeout_s);
  return spec;
}

void locate_program(tracer::TargetSpec &spec, const TargetOptions &options) {
  auto served = tracer::TargetRun::serving_program(spec);
  if (!served)
    cannot_check(served.error().message);
  spec.program = std::move(*served);
  auto elf = decoder::ElfFile::open(spec.program);
  if (!elf)
    cannot_check(elf.error().message);
  spec.regions = resolve_regions(options, *elf);
  spec.load_base = elf->load_base();
  spec.entry = elf->entry();
}

std::string program_name(const tracer::TargetSpec &spec) {
  std::error_code error;
  if (spec.program.empty() ||
      std::filesystem::equivalent(spec.program, spec.launch.program, error))
    return spec.launch.program;
  return fmt::format("{} (exec'd by {})", spec.program, spec.launch.program);
}

std::shared_ptr<tracer::TargetSpec>
located_target_spec(const TargetOptions &options) {
  auto spec = target_spec(options);
  locate_program(*spec, options);
  return spec;
}

std::unique_ptr<search::Property>
make_check_property(const TargetOptions &options,
                    const std::shared_ptr<const tracer::TargetSpec> &spec,
                    const std::vector<search::RegionLayout> &layout) {
  std::vector<std::unique_ptr<search::Property>> parts;
  parts.push_back(search::make_property(options.invariant, layout));
  if (!parts.back())
    usage("unknown --invariant " + options.invariant);
  if (!options.forbid_response.empty()) {
    try {
      parts.push_back(
          std::make_unique<search::ForbiddenResponse>(options.forbid_response));
    } catch (const std::regex_error &error) {
      usage(fmt::format("bad --forbid-response '{}': {}",
                        options.forbid_response, error.what()));
    }
  }
  for (const std::string &path : options.properties)
    parts.push_back(std::make_unique<PluginProperty>(path, spec, layout));
  if (parts.size() == 1)
    return std::move(parts.front());
  return std::make_unique<search::AllOf>(std::move(parts));
}

std::vector<search::RegionLayout>
layout_of(const std::vector<decoder::Region> &regions) {
  std::vector<search::RegionLayout> layout;
  std::size_t offset = 0;
  for (const decoder::Region &region : regions) {
    layout.push_back({region.name, offset, region.length});
    offset += region.length;
  }
  return layout;
}

std::string resolve_program(const std::string &program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) != 0)
      cannot_check(fmt::format("program {} does not exist or is not "
                               "executable",
                               program));
    return program;
  }
  const char *path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    std::string candidate =
        fmt::format("{}/{}", dirs.substr(0, colon), program);
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos)
      break;
    dirs.remove_prefix(colon + 1);
  }
  cannot_check(fmt::format("program {} is not in PATH", program));
}

std::vector<std::string>
decode_messages(const std::vector<std::string> &texts) {
  std::vector<std::string> messages;
  for (const std::string &text : texts) {
    auto decoded = decode_escapes(text);
    if (!decoded)
      usage("bad --message " + decoded.error().message);
    messages.push_back(std::move(*decoded));
  }
  return messages;
}

} // namespace cmc::app
