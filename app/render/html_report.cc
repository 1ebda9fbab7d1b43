#include "app/render/html_report.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "app/render/html_text.h"
#include "app/render/sequence_chart.h"

namespace cmc::app {
namespace {

constexpr const char *kStyle = R"(<style>
body{font:15px/1.45 system-ui,sans-serif;color:#202124;margin:24px auto;
max-width:1200px;padding:0 16px}
h1{font-size:24px;margin:0 0 8px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dadce0}
.verdict{display:inline-block;padding:2px 12px;border-radius:4px;
color:#fff;font-weight:bold}
.verdict.holds{background:#188038}.verdict.violated{background:#d93025}
.verdict.error{background:#b06000}
.verdict.qualified{background:#f9ab00;color:#202124}
.headline{font-family:monospace;white-space:pre-wrap;word-break:break-word;
margin:4px 0}
.caveats{background:#fef7e0;border-left:4px solid #f9ab00;padding:6px 12px 6px 28px;
margin:8px 0;font-family:monospace;white-space:pre-wrap;word-break:break-word}
.what{font-family:monospace;white-space:pre-wrap;word-break:break-all;
background:#f1f3f4;padding:8px 12px;border-radius:4px}
.what.violation{background:#fce8e6;color:#a50e0e}
table{border-collapse:collapse}
th,td{text-align:left;padding:3px 14px 3px 0;vertical-align:top}
th{font-weight:600;color:#5f6368}
code{font-family:monospace;word-break:break-all}
.uncontrolled{color:#d93025;font-weight:bold}
.figure{overflow-x:auto;border:1px solid #dadce0;border-radius:4px;
padding:8px;background:#fff}
.graph svg{max-width:100%;height:auto}
</style>
)";

// The value of key in json as the page shows it (html_of).
std::string field(const nlohmann::json &json, std::string_view key) {
  const auto found = json.find(key);
  return found == json.end() ? "none" : html_of(*found);
}

// A list of bytes as one line of words, each in <code>.
std::string words(const nlohmann::json &list) {
  if (!list.is_array() || list.empty())
    return "none";
  std::string text;
  for (const nlohmann::json &word : list)
    text += (text.empty() ? "" : " ") + ("<code>" + html_of(word) + "</code>");
  return text;
}

std::string row(std::string_view name, const std::string &value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, value);
}

// Whether a "holds" says less than it seems: the report's "qualified", and
// a report without that key is taken as qualified (never a false green).
bool qualified(const nlohmann::json &check) {
  const auto found = check.find("qualified");
  return found == check.end() || !found->is_boolean() || found->get<bool>();
}

// The badge's class and text: a "holds" that a bound, an abstraction or a
// caveat qualifies is not the plain green one.
std::pair<std::string, std::string> badge(const nlohmann::json &check) {
  const std::string verdict = check.at("verdict").get<std::string>();
  if (verdict != "holds" || !qualified(check))
    return {verdict, verdict};
  if (!check.at("complete").get<bool>())
    return {"qualified", fmt::format("holds up to depth {}",
                                     html_of(check.at("max_depth")))};
  return {"qualified", "holds, with caveats"};
}

// The verdict's first lines and its caveats, as the text report says them
// (absent in a report that has none of those keys). A violation's line is
// the badge and the violation below it.
std::string verdict_lines(const nlohmann::json &check) {
  std::string html;
  const auto first = check.find("verdict_lines");
  if (first != check.end() && first->is_array() &&
      check.at("verdict") != "violated")
    for (std::size_t i = 0; i < first->size(); ++i)
      html += fmt::format(R"(<p class="headline"{}>{}</p>)"
                          "\n",
                          i == 0 ? R"( id="headline")" : "",
                          html_of_text((*first)[i]));
  const auto caveats = check.find("caveats");
  if (caveats == check.end() || !caveats->is_array() || caveats->empty())
    return html;
  html += R"(<ul class="caveats" id="caveats">)";
  for (const nlohmann::json &caveat : *caveats)
    html += "<li>" + html_of_text(caveat) + "</li>";
  return html + "</ul>\n";
}

std::string verdict_section(const nlohmann::json &check) {
  const auto [kind, text] = badge(check);
  std::string html = fmt::format(
      R"(<h1>cmc check: <span class="verdict {}" id="verdict">{}</span></h1>)"
      "\n",
      html_escape(kind), html_escape(text));
  html += verdict_lines(check);
  if (!check.at("violation").is_null())
    html += fmt::format(R"(<p class="what violation" id="violation">{}</p>)"
                        "\n",
                        html_of_text(check["violation"]));
  if (!check.at("error").is_null())
    html += fmt::format(R"(<p class="what" id="error">{}</p>)"
                        "\n",
                        html_of_text(check["error"]));
  return html;
}

std::string rate(const nlohmann::json &value, std::string_view unit) {
  if (!value.is_number())
    return "none";
  return fmt::format("{:.2f}{}", value.get<double>(), unit);
}

std::string counts_section(const nlohmann::json &check) {
  std::string html = "<h2>Counts</h2>\n<table id=\"counts\">\n";
  html += row("distinct states", field(check, "distinct_states"));
  html += row("dedup merges", field(check, "dedup_merges"));
  html += row("transitions", field(check, "transitions"));
  html += row("depth", field(check, "max_depth"));
  html += row("time", rate(check.at("elapsed_s"), " s"));
  html += row("states per second", rate(check.at("states_per_s"), ""));
  html +=
      row("transitions per second", rate(check.at("transitions_per_s"), ""));
  const nlohmann::json &collision = check.at("collision_probability");
  html +=
      row("fingerprint collision probability",
          collision.is_number() ? fmt::format("{:.1e}", collision.get<double>())
                                : "none");
  return html + "</table>\n";
}

std::string bounds(const nlohmann::json &check) {
  const nlohmann::json &bounds = check.at("bounds");
  if (bounds.is_null())
    return "none";
  const auto bound = [](const nlohmann::json &limit) {
    return limit.is_null() ? std::string("unbounded")
                           : fmt::format("at most {}", html_of(limit));
  };
  return fmt::format("depth {}, states {}", bound(bounds.at("max_depth")),
                     bound(bounds.at("max_states")));
}

std::string settings_section(const nlohmann::json &check) {
  const nlohmann::json &replay = check.at("replay");
  const nlohmann::json none;
  const auto of = [&](std::string_view key) -> const nlohmann::json & {
    return replay.is_object() ? replay.at(key) : none;
  };
  std::string html = "<h2>Settings</h2>\n<table id=\"settings\">\n";
  html += row("command", words(of("command")));
  html += row("clients", words(of("clients")));
  html += row("regions", words(of("regions")));
  html += row("invariant", html_of(of("invariant")));
  html += row("properties", words(of("properties")));
  html += row("checked", field(check, "checked"));
  html += row("bounds", bounds(check));
  const nlohmann::json &snapshots = check.at("snapshots");
  html += row("mode",
              snapshots.is_object() ? html_of(snapshots.at("mode")) : "none");
  html += row("state", field(check, "state"));
  html += row("seed", field(check, "seed"));
  html += row("tick", field(check, "tick"));
  html += row("workers", field(check, "jobs"));
  return html + "</table>\n";
}

std::string coverage_section(const nlohmann::json &check) {
  const nlohmann::json &coverage = check.at("coverage");
  if (!coverage.is_array())
    return "";
  std::string html = "<h2>Messages and their coverage</h2>\n"
                     "<table id=\"coverage\"><tr><th>#</th><th>client</th>"
                     "<th>message</th><th>sent in</th><th>read whole in</th>"
                     "<th>the target waited in</th></tr>\n";
  for (const nlohmann::json &message : coverage)
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td><code>\"{}\"</code></td><td>{} "
        "transitions</td><td>{}</td><td>{}</td></tr>\n",
        field(message, "message"), field(message, "client"),
        field(message, "send"), field(message, "transitions"),
        field(message, "read_whole"),
        message.at("waits_in").is_null()
            ? ""
            : "<code>" + html_of(message["waits_in"]) + "</code>");
  return html + "</table>\n";
}

std::string sources_section(const nlohmann::json &check) {
  std::string html = "<h2>Time and randomness</h2>\n<table id=\"sources\">\n";
  const auto rows = [&](const nlohmann::json &sources, bool controlled) {
    for (const nlohmann::json &source : sources)
      html += fmt::format(
          "<tr><td{}>{}</td><td><code>{}</code> ({})</td><td>{}</td></tr>\n",
          controlled ? "" : R"( class="uncontrolled")",
          controlled ? "controlled" : "NOT CONTROLLED", field(source, "source"),
          field(source, "via"), field(source, "control"));
  };
  rows(check.at("sources"), true);
  rows(check.at("uncontrolled"), false);
  if (check.at("sources").empty() && check.at("uncontrolled").empty())
    html += "<tr><td>none used</td></tr>\n";
  return html + "</table>\n";
}

std::string counterexample_section(const nlohmann::json &check,
                                   const nlohmann::json &replay) {
  std::string html =
      "<h2>Counterexample</h2>\n<p>The shortest path to the violation, "
      "replayed once: each step's message, the replies, the connections "
      "the server closed and the changes of the regions.</p>\n";
  if (replay.is_null())
    return html + R"(<p class="what violation">The replay for this chart )"
                  "failed: cmc said why on stderr.</p>\n";
  if (replay.at("violation_step").is_null())
    html += R"(<p class="what violation">The replay did not show the )"
            "violation again.</p>\n";
  return html + R"(<div class="figure" id="chart">)" +
         sequence_chart(check, replay) + "</div>\n";
}

std::string backtrace_section(const nlohmann::json &check) {
  const nlohmann::json &frames = check.at("backtrace");
  if (frames.empty())
    return "";
  std::string html = "<h2>Where the target crashed</h2>\n<ol start=\"0\">";
  for (const nlohmann::json &frame : frames)
    html += "<li><code>" + html_of_text(frame) + "</code></li>";
  return html + "</ol>\n";
}

} // namespace

std::string html_report(const nlohmann::json &check,
                        const nlohmann::json &replay,
                        const std::string &graph) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>cmc check: " +
      html_escape(check.at("verdict").get<std::string>()) + "</title>\n" +
      kStyle + "</head>\n<body>\n";
  html += verdict_section(check);
  if (check.at("verdict") == "violated")
    html += counterexample_section(check, replay);
  html += backtrace_section(check);
  html += counts_section(check);
  html += settings_section(check);
  html += coverage_section(check);
  html += sources_section(check);
  if (!graph.empty())
    html += "<h2>State graph</h2>\n" + graph;
  html +=
      fmt::format("<p><small>cmc {}, report format {}</small></p>\n",
                  field(check, "cmc_version"), field(check, "format_version"));
  return html + "</body>\n</html>\n";
}

} // namespace cmc::app
