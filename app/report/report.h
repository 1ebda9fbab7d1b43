#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/report/sources_report.h"
#include "app/report/steps.h"
#include "app/report/verdict_lines.h"
#include "search/breadth_first.h"
#include "tracer/control/target_run.h"

namespace cmc::app {

// "regions", "process", "raw" or "path": --dedup's name of the state kind.
[[nodiscard]] std::string_view state_name(executor::StateKind state);

// The version of the JSON reports' format (docs/report-format.md): one
// more when a key goes away or changes its meaning, not when one is added.
inline constexpr int kReportFormatVersion = 1;

// {"format_version": 1, "cmc_version": "0.25.0"}: every JSON report of
// cmc starts from this object.
[[nodiscard]] nlohmann::json report_header();

// The report of `cmc check --json` (docs/report-format.md): every key of
// docs/schema/check.schema.json; "replay" is null, for the caller to fill.
[[nodiscard]] nlohmann::json report_json(const search::Report &report,
                                         const StepNames &names);
// The report of a check that stopped before a verdict: the same keys, the
// counts 0, what the check did not reach (settings, coverage, ...) null.
[[nodiscard]] nlohmann::json error_json(const std::string &message);

// A step's "read" when the target did not read all of its message (the
// bytes it read, null: not known) and "closed_by_server" (the clients whose
// connection the target closed).
void add_effects_json(nlohmann::json &step,
                      const executor::StepEffects &effects);

// A file an option writes (--json, --html): a path, "-" for stdout, ""
// nowhere. The file is created when this is made, so a path that cannot be
// written is a usage error (UserError) before any work; write() throws
// UserError when it fails (a full disk, a closed stdout). It writes once:
// nothing after the first write, whether that failed or not.
class OutputFile {
public:
  // option names the file in errors ("--json"), what what it holds ("the
  // JSON report").
  OutputFile(std::string_view option, std::string what,
             const std::string &destination);
  void write(std::string_view text);
  // Whether it writes anywhere: a destination was given. What only this
  // file needs is worth making only then.
  [[nodiscard]] bool wanted() const { return !destination_.empty(); }
  // Whether it writes to stdout (-).
  [[nodiscard]] bool to_stdout() const { return destination_ == "-"; }

private:
  std::string what_;
  std::string destination_;
  std::ofstream file_;
  bool done_ = false;
};

// Where --json writes (OutputFile). Strings are written as json_bytes
// writes them.
class JsonOutput {
public:
  explicit JsonOutput(const std::string &destination);
  void write(const nlohmann::json &json);
  // Where the command's text goes: stdout, or stderr when the JSON takes
  // stdout (--json -), which then holds one JSON object and nothing else.
  [[nodiscard]] std::FILE *text_stream() const;

private:
  OutputFile file_;
};

// Where a crash hit: "  at #0 crash+0x1c (misbehave.c:80)", then the
// callers, at most at_most frames.
void print_backtrace(std::FILE *out, const std::vector<executor::Frame> &frames,
                     std::size_t at_most);

// The human-readable summary.
void print_report(std::FILE *out, const search::Report &report,
                  const StepNames &names);
// The same with the verdict's lines given (a random simulation's) and the
// counterexample introduced as title ("minimised counterexample").
void print_report(std::FILE *out, const search::Report &report,
                  const StepNames &names, const VerdictLines &verdict,
                  std::string_view title);

} // namespace cmc::app
