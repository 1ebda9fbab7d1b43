#include "app/cli/scan_command.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "app/cli/site_listing.h"
#include "app/cli/site_marks.h"
#include "app/cli/target_setup.h"
#include "app/report/report.h"
#include "decoder/syscall_scan.h"
#include "tracer/control/site_run.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// The scan's modules with what one run of the program executed.
struct RunResult {
  tracer::SiteRun run;
  SiteMarks marks;
  std::size_t messages = 0;
};

// "waited for input after 2 of 2 messages", "exited with status 0", ...
std::string ending_text(const RunResult &result) {
  if (!result.run.error.empty())
    return "cmc stopped following it: " + result.run.error;
  if (result.run.fault)
    return result.run.fault->describe();
  return fmt::format("waited for input after {} of {} messages (then killed)",
                     result.run.messages_sent, result.messages);
}

std::string_view attribution_name(decoder::Attribution attribution) {
  switch (attribution) {
  case decoder::Attribution::kFileName:
    return "file name";
  case decoder::Attribution::kStaticLibc:
    return "static libc";
  case decoder::Attribution::kNoStaticLibc:
    return "no static libc";
  case decoder::Attribution::kNoSymbols:
    return "no symbols";
  }
  return "";
}

nlohmann::json inline_json(decoder::SiteOrigin origin) {
  if (origin == decoder::SiteOrigin::kUnknown)
    return nullptr;
  return origin == decoder::SiteOrigin::kInline;
}

nlohmann::json text_or_null(const std::string &text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

nlohmann::json module_json(const Module &module,
                           const std::vector<std::size_t> *stops) {
  nlohmann::json sites = nlohmann::json::array();
  for (std::size_t i = 0; i < module.file.sites.size(); ++i) {
    const auto &site = module.file.sites[i];
    nlohmann::json json = {
        {"address", fmt::format("{:#x}", site.address)},
        {"instruction", site.instruction},
        {"function", site.function.name},
        {"number", site.number ? nlohmann::json(*site.number) : nullptr},
        {"name", site.number
                     ? nlohmann::json(decoder::syscall_name(*site.number))
                     : nullptr},
        {"origin", decoder::origin_name(site.origin)},
        {"inline", inline_json(site.origin)}};
    json["observed"] = stops != nullptr ? nlohmann::json((*stops)[i]) : nullptr;
    sites.push_back(std::move(json));
  }
  nlohmann::json tsc_sites = nlohmann::json::array();
  for (const auto &site : module.file.tsc_sites)
    tsc_sites.push_back({{"address", fmt::format("{:#x}", site.address)},
                         {"instruction", site.rdtscp ? "rdtscp" : "rdtsc"}});
  nlohmann::json cpu_sites = nlohmann::json::array();
  for (const auto &site : module.file.cpu_sites)
    cpu_sites.push_back(
        {{"address", fmt::format("{:#x}", site.address)},
         {"instruction", decoder::instruction_name(site.instruction)}});
  nlohmann::json json = {
      {"module", module.path},
      {"attribution", attribution_name(module.file.attribution)},
      {"static_libc", text_or_null(module.file.static_libc)},
      {"note", text_or_null(attribution_note(module.file))},
      {"sites", sites},
      {"count", module.file.sites.size()},
      {"tsc_sites", tsc_sites},
      {"cpu_sites", cpu_sites}};
  json["observed_sites"] =
      stops != nullptr
          ? nlohmann::json(std::count_if(stops->begin(), stops->end(),
                                         [](std::size_t n) { return n > 0; }))
          : nullptr;
  return json;
}

// The report of `cmc scan --json` (docs/schema/scan.schema.json): the
// same keys with and without --run, what only a run tells null without.
nlohmann::json scan_json(const std::vector<Module> &modules,
                         const RunResult *ran) {
  nlohmann::json json = report_header();
  json["modules"] = nlohmann::json::array();
  for (std::size_t m = 0; m < modules.size(); ++m)
    json["modules"].push_back(module_json(
        modules[m], ran != nullptr ? &ran->marks.stops[m] : nullptr));
  if (ran == nullptr) {
    for (const char *key :
         {"vdso_calls", "unscanned_sites", "sources", "uncontrolled", "run"})
      json[key] = nullptr;
    return json;
  }
  const RunResult &result = *ran;
  json["vdso_calls"] = nlohmann::json::array();
  for (const VdsoCall &call : result.marks.vdso_calls)
    json["vdso_calls"].push_back(
        {{"function", call.function}, {"calls", call.calls}});
  json["unscanned_sites"] = nlohmann::json::array();
  for (const UnscannedSite &site : result.marks.unscanned) {
    const nlohmann::json address = fmt::format("{:#x}", site.address);
    nlohmann::json names = nlohmann::json::array();
    for (const long number : site.seen->numbers)
      names.push_back(decoder::syscall_name(number));
    json["unscanned_sites"].push_back(
        {{"path", site.path},
         {"address", site.in_module ? address : nullptr},
         {"file_offset", site.in_module ? nullptr : address},
         {"missed_by_scan", site.in_module},
         {"numbers", site.seen->numbers},
         {"names", names},
         {"calls", site.seen->count}});
  }
  add_sources_json(json, result.run.sources);
  json["run"] = {
      {"messages_sent", result.run.messages_sent},
      {"ended", ending_text(result)},
      {"error", text_or_null(result.run.error)},
  };
  return json;
}

void print_run(const RunResult &result) {
  print_calls_seen(result.marks);
  print_sources(stdout, result.run.sources);
  fmt::print("run: {}\n", ending_text(result));
}

// Runs program and scans what it ran last: the server a wrapper exec'd.
RunResult run_program(const ScanOptions &options, const std::string &program,
                      std::vector<Module> &modules) {
  tracer::SiteRunSpec spec;
  spec.launch.program = program;
  spec.launch.argv = options.command;
  spec.launch.show_output = options.show_output;
  spec.messages = decode_messages(options.messages);
  spec.seed = options.seed;
  spec.step_timeout = step_timeout(options.step_timeout_s);
  auto run = tracer::run_for_sites(spec);
  if (!run)
    cannot_check(run.error().message);
  modules = scan_modules(run->program.empty() ? program : run->program);
  SiteMarks marks = mark_sites(modules, run->sites);
  return {std::move(*run), std::move(marks), spec.messages.size()};
}

} // namespace

void add_scan_options(CLI::App &scan, ScanOptions &options) {
  scan.add_option("command", options.command,
                  "BINARY: the executable, its shared libraries found as "
                  "ld.so finds them; with --run: -- PROGRAM [ARGS...]")
      ->type_name("");
  scan.add_option("--json", options.json,
                  "Write every site as JSON to FILE (- for stdout; "
                  "docs/report-format.md)")
      ->type_name("FILE")
      ->check(json_file());
  scan.add_flag("--all", options.sites,
                "List the sites of libc and ld.so too, not only inline and "
                "unknown ones");
  scan.add_flag("--run", options.run,
                "Also run the program under the tracer (stopping on every "
                "system call) until it exits or waits for input with every "
                "message sent; mark each site observed or never reached and "
                "list the vDSO functions it called");
  scan.add_option("-m,--message", options.messages,
                  "With --run: a message to send once the program listens "
                  "(repeatable, in order, one connection; C escapes decoded)")
      ->type_name("MESSAGE");
  scan.add_option("--seed", options.seed,
                  "With --run: seed of getrandom, /dev/urandom and AT_RANDOM")
      ->type_name("N")
      ->check(whole_number());
  scan.add_option("--step-timeout", options.step_timeout_s,
                  "With --run: seconds to wait for the program to exit or "
                  "wait for input (default 10, at most 86400)")
      ->type_name("SECONDS");
  scan.add_flag("--show-output", options.show_output,
                "With --run: let the program write to cmc's stdout and "
                "stderr");
}

int run_scan(const ScanOptions &options) {
  if (options.command.empty())
    throw UserError(ExitCode::kUsage, "give the BINARY to scan");
  if (!options.run && options.command.size() > 1)
    throw UserError(ExitCode::kUsage,
                    "cmc scan takes one BINARY; arguments need --run");
  if (!options.run && !options.messages.empty())
    throw UserError(ExitCode::kUsage, "--message needs --run");
  JsonOutput json_output(options.json);
  std::vector<Module> modules;
  std::optional<RunResult> result;
  if (options.run)
    result =
        run_program(options, resolve_program(options.command.front()), modules);
  else
    modules = scan_modules(options.command.front());
  const RunResult *ran = result ? &*result : nullptr;
  if (!options.json.empty())
    json_output.write(scan_json(modules, ran));
  if (options.json != "-") {
    print_sites(modules, options.sites, ran != nullptr ? &ran->marks : nullptr);
    if (ran != nullptr)
      print_run(*ran);
  }
  if (ran != nullptr && !ran->run.error.empty())
    cannot_check("stopped following the program: " + ran->run.error);
  return 0;
}

} // namespace cmc::app
