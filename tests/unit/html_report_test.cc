#include "app/render/html_report.h"

#include <gtest/gtest.h>

#include "app/render/dot_svg.h"
#include "app/render/html_text.h"
#include "app/render/sequence_chart.h"

namespace cmc::app {
namespace {

using nlohmann::json;

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(HtmlText, EscapesWhatHtmlGivesAMeaning) {
  EXPECT_EQ(html_escape(R"(<a href="x">&'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

// A target's bytes are C-escaped, then HTML-escaped: no byte of theirs
// reaches the page as markup or as other than ASCII.
TEST(HtmlText, ShowsAnyBytesAsEscapedText) {
  EXPECT_EQ(html_of(json("<b>\xff\n")), "&lt;b&gt;\\xff\\n");
  EXPECT_EQ(html_of(json::parse(R"({"hex": "3cff0a"})")), "&lt;\\xff\\n");
  EXPECT_EQ(html_of(json(7)), "7");
  EXPECT_EQ(html_of(json(nullptr)), "none");
}

// cmc's texts quote bytes C-escaped already: only raw bytes are escaped.
TEST(HtmlText, EscapesOnlyRawBytesOfCmcsOwnText) {
  EXPECT_EQ(html_of_text(json("forbidden response: \"bye\\n\"\xff")),
            "forbidden response: &quot;bye\\n&quot;\\xff");
}

TEST(SvgOfDot, DrawsAGraphWithoutAddresses) {
  auto svg = svg_of_dot(R"(digraph g { a -> b [label="SET a\\n"]; })");
  ASSERT_TRUE(svg) << svg.error().message;
  EXPECT_TRUE(svg->starts_with("<svg")) << *svg;
  EXPECT_TRUE(has(*svg, "SET a\\n")) << *svg;
  EXPECT_FALSE(has(*svg, "http")) << *svg;
  EXPECT_FALSE(has(*svg, "<!DOCTYPE")) << *svg;
}

TEST(SvgOfDot, RefusesWhatIsNotDot) {
  auto svg = svg_of_dot("digraph { a -> ");
  ASSERT_FALSE(svg);
  EXPECT_TRUE(has(svg.error().message, "Graphviz cannot read the graph"))
      << svg.error().message;
}

json check_report(const std::string &verdict) {
  json report = json::parse(R"({
    "format_version": 1, "cmc_version": "0.25.0", "complete": true,
    "distinct_states": 4, "dedup_merges": 5, "transitions": 8,
    "max_depth": 2, "elapsed_s": 0.5, "states_per_s": 8.0,
    "transitions_per_s": 16.0, "collision_probability": 2.4e-38,
    "counterexample": null, "violation": null, "error": null,
    "tick": null, "max_ticks": 0, "seed": 0,
    "bounds": {"max_depth": null, "max_states": 100}, "jobs": 2,
    "state": "regions", "checked": "properties, crashes, exits and hangs",
    "verdict_lines": ["holds: 4 distinct states, 5 dedup merges, 8 transitions"],
    "caveats": [], "qualified": false,
    "snapshots": {"mode": "snapshot"}, "backtrace": [],
    "coverage": [{"message": 1, "client": "A", "send": "<i>&\n",
                  "transitions": 4, "read_whole": 4, "waits_in": null}],
    "sources": [{"source": "clock_gettime", "via": "vdso",
                 "control": "virtual clock"}],
    "uncontrolled": [{"source": "rdtsc", "via": "other",
                      "control": "none"}],
    "replay": {
  "command" : [ "build/demo/kv", "7000" ],
              "clients" : ["A"],
                          "regions" : ["cmc_state"],
                                      "invariant" : "sticky",
                                                    "properties" : []}})");
  report["verdict"] = verdict;
  return report;
}

TEST(HtmlReport, AHoldingCheckHasNoChart) {
  const std::string page = html_report(check_report("holds"), nullptr, "");
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(has(page, R"(<span class="verdict holds" id="verdict">holds)"));
  EXPECT_TRUE(has(page, "<tr><th>distinct states</th><td>4</td></tr>"));
  EXPECT_TRUE(has(page, "depth unbounded, states at most 100"));
  EXPECT_TRUE(has(page, "&lt;i&gt;&amp;\\n")) << page;
  EXPECT_TRUE(has(page, "NOT CONTROLLED"));
  EXPECT_FALSE(has(page, "<svg"));
  EXPECT_FALSE(has(page, "<script"));
}

TEST(HtmlReport, AQualifiedHoldsIsNotGreen) {
  json report = check_report("holds");
  report["qualified"] = true;
  report["caveats"] = {"NOT CONTROLLED: rdtsc (other): <none>"};
  std::string page = html_report(report, nullptr, "");
  EXPECT_TRUE(has(page, R"(<span class="verdict qualified" id="verdict">)"
                        "holds, with caveats</span>"))
      << page;
  EXPECT_TRUE(has(page, R"(<p class="headline" id="headline">holds: 4 )"));
  EXPECT_TRUE(has(page, R"(<ul class="caveats" id="caveats"><li>NOT )"
                        "CONTROLLED: rdtsc (other): &lt;none&gt;</li></ul>"))
      << page;
  report["complete"] = false;
  page = html_report(report, nullptr, "");
  EXPECT_TRUE(has(page, R"(<span class="verdict qualified" id="verdict">)"
                        "holds up to depth 2</span>"))
      << page;
  // A report that does not say is never taken for a plain holds.
  report.erase("qualified");
  report["complete"] = true;
  page = html_report(report, nullptr, "");
  EXPECT_FALSE(has(page, R"(class="verdict holds")")) << page;
}

TEST(SequenceChart, DrawsEachStepsArrowsAndChanges) {
  const json check = check_report("violated");
  const json replay = json::parse(R"({
    "violation": "sticky: byte 1 of cmc_state went 01 -> 00",
    "violation_step": 2,
    "steps": [
      {"client": "A", "send": "SET b\n", "replies": [
        {"client": "A", "bytes": "OK\n"}],
       "changes": [{"region": "cmc_state", "offset": 1, "before": 0,
                    "after": 1}]},
      {"client": "A", "send": {"hex": "3cff0a"}, "replies": [],
       "closed_by_server": [0],
       "changes": [{"region": "cmc_state", "offset": 1, "before": 1,
                    "after": 0}]}]})");
  const std::string svg = sequence_chart(check, replay);
  for (const char *part : {
           R"(<g class="lifeline" data-name="A">)",
           R"(<g class="lifeline server" data-name="kv">)",
           R"(<g class="arrow send" data-step="1" data-from="A" )"
           R"(data-to="kv"><title>&quot;SET b\n&quot;</title>)",
           R"(<g class="arrow reply" data-step="1" data-from="kv" )"
           R"(data-to="A"><title>&quot;OK\n&quot;</title>)",
           // Any bytes: C-escaped, then HTML-escaped.
           R"(<g class="arrow send" data-step="2" data-from="A" )"
           R"(data-to="kv"><title>&quot;&lt;\xff\n&quot;</title>)",
           R"(<g class="arrow close" data-step="2" data-from="kv" )"
           R"(data-to="A">)",
           "cmc_state+1 01 -&gt; 00",
           R"(<g class="step violating" data-step="2">)",
       })
    EXPECT_TRUE(has(svg, part)) << part << " in " << svg;
}

} // namespace
} // namespace cmc::app
