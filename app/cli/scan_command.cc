#include "app/cli/scan_command.h"

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "app/cli/site_marks.h"
#include "app/cli/target_options.h"
#include "app/report/report.h"
#include "decoder/elf_file.h"
#include "decoder/library_search.h"
#include "decoder/syscall_scan.h"
#include "tracer/site_run.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

Module scan_module(const std::string &path) {
  auto elf = decoder::ElfFile::open(path);
  if (!elf)
    cannot_check(elf.error().message);
  auto file = decoder::scan_file(*elf);
  if (!file)
    cannot_check(file.error().message);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    cannot_check(fmt::format("cannot stat {}", path));
  return {path,
          {major(st.st_dev), minor(st.st_dev), st.st_ino},
          elf->loads(),
          std::move(*file)};
}

// The scan's modules with what one run of the program executed.
struct RunResult {
  tracer::SiteRun run;
  SiteMarks marks;
  std::size_t messages = 0;
};

std::string numbers_text(const std::vector<long> &numbers) {
  std::string text;
  for (const long number : numbers) {
    const std::string name = decoder::syscall_name(number);
    text += fmt::format("{}{}", text.empty() ? "" : ", ",
                        name.empty() ? std::to_string(number) : name);
  }
  return text;
}

// "waited for input after 2 of 2 messages", "exited with status 0", ...
std::string ending_text(const RunResult &result) {
  if (!result.run.error.empty())
    return "cmc stopped following it: " + result.run.error;
  if (result.run.fault)
    return result.run.fault->describe();
  return fmt::format("waited for input after {} of {} messages (then killed)",
                     result.run.messages_sent, result.messages);
}

bool listed_by_default(const decoder::SyscallSite &site) {
  return site.origin == decoder::SiteOrigin::kInline ||
         site.origin == decoder::SiteOrigin::kUnknown;
}

std::string number_text(const decoder::SyscallSite &site) {
  if (!site.number)
    return "?";
  const std::string name = decoder::syscall_name(*site.number);
  return name.empty() ? std::to_string(*site.number)
                      : fmt::format("{} ({})", *site.number, name);
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

// Why a static executable's sites have the origins they have, or "".
std::string attribution_note(const decoder::FileSites &file) {
  switch (file.attribution) {
  case decoder::Attribution::kFileName:
    return "";
  case decoder::Attribution::kStaticLibc:
    return fmt::format("libc's functions from {}", file.static_libc);
  case decoder::Attribution::kNoStaticLibc:
    return fmt::format("{}: libc's sites are counted as inline",
                       file.static_libc_error);
  case decoder::Attribution::kNoSymbols:
    return "no function symbols: libc's sites cannot be told from inline ones";
  }
  return "";
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
  nlohmann::json json = {
      {"module", module.path},
      {"attribution", attribution_name(module.file.attribution)},
      {"static_libc", text_or_null(module.file.static_libc)},
      {"note", text_or_null(attribution_note(module.file))},
      {"sites", sites},
      {"count", module.file.sites.size()},
      {"tsc_sites", tsc_sites}};
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

// "  (181 libc, 2 inline; static executable: ...)": the number of sites of
// each origin present, and how they were told apart; then "; 2 rdtsc" when
// the file has rdtsc or rdtscp instructions.
std::string summary_note(const decoder::FileSites &file) {
  std::string counts;
  for (const auto origin :
       {decoder::SiteOrigin::kLibc, decoder::SiteOrigin::kLoader,
        decoder::SiteOrigin::kInline, decoder::SiteOrigin::kUnknown}) {
    const auto count =
        std::count_if(file.sites.begin(), file.sites.end(),
                      [&](const auto &site) { return site.origin == origin; });
    if (count > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", count,
                            decoder::origin_name(origin));
  }
  const std::string note = attribution_note(file);
  if (!note.empty())
    counts += fmt::format("{}static executable: {}", counts.empty() ? "" : "; ",
                          note);
  if (!file.tsc_sites.empty())
    counts += fmt::format("{}{} rdtsc", counts.empty() ? "" : "; ",
                          file.tsc_sites.size());
  return counts.empty() ? "" : fmt::format("  ({})", counts);
}

// " observed 3" or " never reached" in a run; "" without one.
std::string mark_text(const SiteMarks *marks, std::size_t module,
                      std::size_t site) {
  if (marks == nullptr)
    return "";
  const std::size_t stops = marks->stops[module][site];
  return stops > 0 ? fmt::format(" observed {}", stops) : " never reached";
}

std::string observed_text(const SiteMarks *marks, std::size_t module) {
  if (marks == nullptr)
    return "";
  const auto &stops = marks->stops[module];
  return fmt::format("  {} observed",
                     std::count_if(stops.begin(), stops.end(),
                                   [](std::size_t n) { return n > 0; }));
}

void print_run(const RunResult &result) {
  print_calls_seen(result.marks);
  print_sources(stdout, result.run.sources);
  fmt::print("run: {}\n", ending_text(result));
}

RunResult run_program(const ScanOptions &options,
                      const std::vector<Module> &modules) {
  tracer::SiteRunSpec spec;
  spec.launch.program = modules.front().path;
  spec.launch.argv = options.command;
  spec.launch.show_output = options.show_output;
  spec.messages = decode_messages(options.messages);
  spec.seed = options.seed;
  spec.step_timeout = step_timeout(options.step_timeout_s);
  auto run = tracer::run_for_sites(spec);
  if (!run)
    cannot_check(run.error().message);
  SiteMarks marks = mark_sites(modules, run->sites);
  return {std::move(*run), std::move(marks), spec.messages.size()};
}

} // namespace

std::vector<Module> scan_modules(const std::string &binary) {
  auto executable = decoder::ElfFile::open(binary);
  if (!executable)
    cannot_check(executable.error().message);
  auto libraries = decoder::loaded_libraries(*executable);
  if (!libraries)
    cannot_check(libraries.error().message);
  std::vector<Module> modules{scan_module(binary)};
  for (const std::string &library : *libraries)
    modules.push_back(scan_module(library));
  return modules;
}

void print_sites(const std::vector<Module> &modules, bool all_sites,
                 const SiteMarks *marks) {
  for (std::size_t m = 0; m < modules.size(); ++m)
    for (std::size_t i = 0; i < modules[m].file.sites.size(); ++i) {
      const auto &site = modules[m].file.sites[i];
      if (all_sites || listed_by_default(site))
        fmt::print("{} {:#x} {} {} {} {}{}\n", modules[m].path, site.address,
                   site.function.name.empty() ? "?" : site.function.name,
                   site.instruction, number_text(site),
                   decoder::origin_name(site.origin), mark_text(marks, m, i));
    }
  fmt::print("summary:\n");
  for (std::size_t m = 0; m < modules.size(); ++m)
    fmt::print("  {:6} sites  {}{}{}\n", modules[m].file.sites.size(),
               modules[m].path, summary_note(modules[m].file),
               observed_text(marks, m));
}

void print_calls_seen(const SiteMarks &marks) {
  fmt::print("vDSO functions called:{}\n",
             marks.vdso_calls.empty() ? " none" : "");
  for (const VdsoCall &call : marks.vdso_calls)
    fmt::print("  {}  {} calls\n",
               call.function.empty() ? "? (outside every function)"
                                     : call.function,
               call.calls);
  if (!marks.unscanned.empty())
    fmt::print("system calls at no scanned site:\n");
  for (const UnscannedSite &site : marks.unscanned)
    fmt::print("  {} {} {:#x}: {} ({} calls){}\n",
               site.path.empty() ? "(anonymous memory)" : site.path,
               site.in_module ? "address" : "file offset", site.address,
               numbers_text(site.seen->numbers), site.seen->count,
               site.in_module ? "; MISSED BY THE SCAN" : "");
}

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
  std::string binary = options.command.front();
  if (options.run)
    binary = resolve_program(binary);
  const std::vector<Module> modules = scan_modules(binary);
  std::optional<RunResult> result;
  if (options.run)
    result = run_program(options, modules);
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
