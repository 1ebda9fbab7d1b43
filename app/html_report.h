#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace cmc::app {

// The page of `cmc check --html`: one HTML document that needs nothing
// else (its style inline, no script, no address of anything outside it),
// made from what --json writes, so the two never disagree. check is the
// check's report (report_json with its "replay" filled in); replay the
// counterexample replayed once (replay_report_json), null when there is
// none; graph an <svg> of the state graph (svg_of_dot), "" for none.
[[nodiscard]] std::string html_report(const nlohmann::json &check,
                                      const nlohmann::json &replay,
                                      const std::string &graph);

// Where --html writes: a file, "" nowhere. The file is created when this
// is made, so a path that cannot be written is a usage error (UserError)
// before any work; write() throws UserError when it fails. It writes one
// page: nothing after the first write, whether that failed or not.
class PageOutput {
public:
  explicit PageOutput(const std::string &path);
  void write(const std::string &page);

private:
  std::string path_;
  std::ofstream file_;
  bool done_ = false;
};

} // namespace cmc::app
