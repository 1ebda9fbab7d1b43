#include "app/scan_command.h"

#include <nlohmann/json.hpp>

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
  bool system = false; // libc or ld.so: their sites are not "inline"
  std::vector<decoder::SyscallSite> sites;
};

bool is_system_library(const std::string &path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  return name.starts_with("libc.so") || name.starts_with("ld-linux");
}

Module scan_module(const std::string &path) {
  auto elf = decoder::ElfFile::open(path);
  if (!elf)
    throw UserError(ExitCode::kCannotCheck, elf.error().message);
  auto sites = decoder::scan_syscall_sites(*elf);
  if (!sites)
    throw UserError(ExitCode::kCannotCheck, sites.error().message);
  return {path, is_system_library(path), std::move(*sites)};
}

std::string number_text(const decoder::SyscallSite &site) {
  if (!site.number)
    return "?";
  const std::string name = decoder::syscall_name(*site.number);
  return name.empty() ? std::to_string(*site.number)
                      : fmt::format("{} ({})", *site.number, name);
}

nlohmann::json module_json(const Module &module) {
  nlohmann::json sites = nlohmann::json::array();
  for (const auto &site : module.sites)
    sites.push_back(
        {{"address", fmt::format("{:#x}", site.address)},
         {"instruction", site.instruction},
         {"function", site.function},
         {"number", site.number ? nlohmann::json(*site.number) : nullptr},
         {"name", site.number
                      ? nlohmann::json(decoder::syscall_name(*site.number))
                      : nullptr},
         {"inline", !module.system}});
  return {{"module", module.path},
          {"sites", sites},
          {"count", module.sites.size()}};
}

void print_modules(const std::vector<Module> &modules, bool all_sites) {
  for (const Module &module : modules) {
    if (module.system && !all_sites)
      continue;
    for (const auto &site : module.sites)
      fmt::print("{} {:#x} {} {} {}{}\n", module.path, site.address,
                 site.function.empty() ? "?" : site.function, site.instruction,
                 number_text(site), module.system ? "" : " inline");
  }
  fmt::print("summary:\n");
  for (const Module &module : modules)
    fmt::print("  {:6} sites  {}{}\n", module.sites.size(), module.path,
               module.system || module.sites.empty() ? "" : "  (inline)");
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
                "List the sites of libc and ld.so too, not only inline ones");
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
