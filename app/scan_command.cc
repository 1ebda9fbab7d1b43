#include "app/scan_command.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "decoder/elf_file.h"
#include "decoder/library_search.h"
#include "decoder/syscall_scan.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

struct Module {
  std::string path;
  decoder::FileSites file;
};

Module scan_module(const std::string &path) {
  auto elf = decoder::ElfFile::open(path);
  if (!elf)
    throw UserError(ExitCode::kCannotCheck, elf.error().message);
  auto file = decoder::scan_file(*elf);
  if (!file)
    throw UserError(ExitCode::kCannotCheck, file.error().message);
  return {path, std::move(*file)};
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

nlohmann::json module_json(const Module &module) {
  nlohmann::json sites = nlohmann::json::array();
  for (const auto &site : module.file.sites)
    sites.push_back(
        {{"address", fmt::format("{:#x}", site.address)},
         {"instruction", site.instruction},
         {"function", site.function.name},
         {"number", site.number ? nlohmann::json(*site.number) : nullptr},
         {"name", site.number
                      ? nlohmann::json(decoder::syscall_name(*site.number))
                      : nullptr},
         {"origin", decoder::origin_name(site.origin)},
         {"inline", inline_json(site.origin)}});
  return {{"module", module.path},
          {"attribution", attribution_name(module.file.attribution)},
          {"static_libc", text_or_null(module.file.static_libc)},
          {"note", text_or_null(attribution_note(module.file))},
          {"sites", sites},
          {"count", module.file.sites.size()}};
}

// "  (181 libc, 2 inline; static executable: ...)": the number of sites of
// each origin present, and how they were told apart.
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
  if (note.empty())
    return counts.empty() ? "" : fmt::format("  ({})", counts);
  return fmt::format("  ({}{}static executable: {})", counts,
                     counts.empty() ? "" : "; ", note);
}

void print_modules(const std::vector<Module> &modules, bool all_sites) {
  for (const Module &module : modules)
    for (const auto &site : module.file.sites)
      if (all_sites || listed_by_default(site))
        fmt::print("{} {:#x} {} {} {} {}\n", module.path, site.address,
                   site.function.name.empty() ? "?" : site.function.name,
                   site.instruction, number_text(site),
                   decoder::origin_name(site.origin));
  fmt::print("summary:\n");
  for (const Module &module : modules)
    fmt::print("  {:6} sites  {}{}\n", module.file.sites.size(), module.path,
               summary_note(module.file));
}

} // namespace

void add_scan_options(CLI::App &scan, ScanOptions &options) {
  scan.add_option("binary", options.binary,
                  "The executable; its shared libraries are found as ld.so "
                  "finds them")
      ->required();
  scan.add_option("--json", options.json,
                  "Write every site as JSON to FILE (- for stdout)");
  scan.add_flag("--all", options.sites,
                "List the sites of libc and ld.so too, not only inline and "
                "unknown ones");
}

int run_scan(const ScanOptions &options) {
  auto executable = decoder::ElfFile::open(options.binary);
  if (!executable)
    throw UserError(ExitCode::kCannotCheck, executable.error().message);
  auto libraries = decoder::loaded_libraries(*executable);
  if (!libraries)
    throw UserError(ExitCode::kCannotCheck, libraries.error().message);
  std::vector<Module> modules{scan_module(options.binary)};
  for (const std::string &library : *libraries)
    modules.push_back(scan_module(library));
  if (!options.json.empty()) {
    nlohmann::json json = nlohmann::json::array();
    for (const Module &module : modules)
      json.push_back(module_json(module));
    if (options.json == "-") {
      std::cout << json.dump(2) << '\n';
      return 0;
    }
    std::ofstream(options.json) << json.dump(2) << '\n';
  }
  print_modules(modules, options.sites);
  return 0;
}

} // namespace cmc::app
