// cmc check --html: the page rendered by a real headless browser
// (Debian's chromium), its chart checked against what `cmc replay --json`
// reports of the same counterexample. Without a chromium that starts, the
// browser tests skip and say why.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "tests/integration/run_cmc.h"
#include "util/escape.h"

namespace cmc::testing {
namespace {

std::string read_file(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

// A directory of the test's own, removed after it.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "cmc-html-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp");
    path_ = pattern;
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir() { std::filesystem::remove_all(path_); }
  [[nodiscard]] std::string operator/(const std::string &name) const {
    return path_ + "/" + name;
  }

private:
  std::string path_;
};

bool on_path(const std::string &program) {
  const char *path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    if (access((dirs.substr(start, end - start) + "/" + program).c_str(),
               X_OK) == 0)
      return true;
    start = end + 1;
  }
  return false;
}

struct Rendered {
  std::string dom; // the DOM once the page loaded, as HTML
  std::string log; // the browser's stderr, its console lines included
  // Why the browser did not render the page (chromium is not installed or
  // cannot start): "" when it did.
  std::string failure;
};

// The page at path loaded by headless chromium (at most 60 s), its DOM
// dumped; a line on its console fails the test.
Rendered render(const std::string &path, const TempDir &dir) {
  if (!on_path("chromium"))
    return {"", "", "chromium is not installed (scripts/setup.sh installs it)"};
  std::vector<std::string> args{"timeout",
                                "-k",
                                "5",
                                "60",
                                "chromium",
                                "--headless",
                                "--no-sandbox",
                                "--disable-gpu",
                                "--no-first-run",
                                "--disable-crash-reporter",
                                "--enable-logging=stderr",
                                "--v=0",
                                "--user-data-dir=" + (dir / "profile"),
                                "--dump-dom",
                                "file://" + path};
  std::vector<char *> argv;
  argv.reserve(args.size() + 1);
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string out = dir / "browser.out";
  const std::string err = dir / "browser.err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  const int spawned =
      posix_spawnp(&pid, "timeout", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Rendered rendered;
  if (spawned != 0) {
    rendered.failure = "cannot run timeout(1)";
    return rendered;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  // Helpers the browser left behind came to this subreaper.
  (void)reap_leftovers();
  rendered.dom = read_file(out);
  rendered.log = read_file(err);
  // The console's errors: a page without script has none.
  EXPECT_FALSE(has(rendered.log, "Uncaught")) << rendered.log;
  EXPECT_FALSE(has(rendered.log, ":CONSOLE(")) << rendered.log;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      !has(rendered.dom, "</html>"))
    rendered.failure =
        "chromium cannot render the page: status " +
        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status)
                                         : 128 + WTERMSIG(status)) +
        ": " + last_line(rendered.log);
  return rendered;
}

// Every tag of the page closed in the order opened (the void elements of
// HTML and SVG's self-closing ones aside), the page one <html> element.
std::string unbalanced_tag(const std::string &page) {
  static const std::set<std::string> kVoid{"meta", "br",    "hr",
                                           "img",  "input", "link"};
  static const std::regex kTag(R"(<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>)");
  std::vector<std::string> open;
  const std::string body = page.substr(page.find("<html"));
  for (auto it = std::sregex_iterator(body.begin(), body.end(), kTag);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[2];
    if ((*it)[3] == "/" || kVoid.contains(name))
      continue;
    if ((*it)[1] != "/") {
      open.push_back(name);
      continue;
    }
    if (open.empty() || open.back() != name)
      return "</" + name + "> closes " +
             (open.empty() ? "nothing" : open.back());
    open.pop_back();
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

// A page well-formed, without script and without the address of anything
// outside it.
void expect_self_contained(const std::string &page) {
  EXPECT_EQ(unbalanced_tag(page), "");
  EXPECT_FALSE(has(page, "http:")) << "the page names an address";
  EXPECT_FALSE(has(page, "https:")) << "the page names an address";
  EXPECT_FALSE(has(page, "<script"));
}

// text as the DOM serialises a text node: & < > escaped.
std::string in_dom(const std::string &text) {
  std::string escaped;
  for (const char c : text)
    escaped += c == '&'   ? "&amp;"
               : c == '<' ? "&lt;"
               : c == '>' ? "&gt;"
                          : std::string(1, c);
  return escaped;
}

// What the page shows of a target's bytes: C escapes, in the DOM.
std::string shown(const std::string &bytes) {
  return in_dom(encode_escapes(bytes));
}

struct Arrow {
  std::string kind, step, from, to, label;
  bool operator==(const Arrow &) const = default;
  friend std::ostream &operator<<(std::ostream &out, const Arrow &arrow) {
    return out << arrow.step << " " << arrow.kind << " " << arrow.from << " -> "
               << arrow.to << ": " << arrow.label;
  }
};

std::vector<Arrow> arrows_in(const std::string &dom) {
  static const std::regex kArrow(
      R"re(<g class="arrow (\w+)" data-step="(\d+)" data-from="([^"]*)" data-to="([^"]*)"><title>([^<]*)</title>)re");
  std::vector<Arrow> arrows;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), kArrow);
       it != std::sregex_iterator(); ++it)
    arrows.push_back({(*it)[1], (*it)[2], (*it)[3], (*it)[4], (*it)[5]});
  return arrows;
}

// The arrows `cmc replay --json`'s report says the chart must have: per
// step its message, its replies, the connections the server closed.
std::vector<Arrow> arrows_of(const nlohmann::json &replay,
                             const std::vector<std::string> &clients,
                             const std::string &server) {
  std::vector<Arrow> arrows;
  for (std::size_t i = 0; i < replay["steps"].size(); ++i) {
    const nlohmann::json &step = replay["steps"][i];
    const std::string number = std::to_string(i + 1);
    arrows.push_back({"send", number, step["client"], server,
                      "\"" + shown(step["send"]) + "\""});
    for (const nlohmann::json &reply : step["replies"])
      arrows.push_back({"reply", number, server, reply["client"],
                        "\"" + shown(reply["bytes"]) + "\""});
    for (const nlohmann::json &client :
         step.value("closed_by_server", nlohmann::json::array()))
      arrows.push_back({"close", number, server,
                        clients.at(client.get<std::size_t>()),
                        "closed by the server"});
  }
  return arrows;
}

std::vector<std::string> lifelines_in(const std::string &dom) {
  static const std::regex kLifeline(
      R"re(<g class="lifeline( server)?" data-name="([^"]*)">)re");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), kLifeline);
       it != std::sregex_iterator(); ++it)
    names.push_back((*it)[2]);
  return names;
}

std::vector<std::string> changes_in(const std::string &dom) {
  static const std::regex kChange(
      R"re(<text class="change" data-step="(\d+)"[^>]*>([^<]*)</text>)re");
  std::vector<std::string> changes;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), kChange);
       it != std::sregex_iterator(); ++it)
    changes.push_back(std::string((*it)[1]) + " " + std::string((*it)[2]));
  return changes;
}

std::vector<std::string> changes_of(const nlohmann::json &replay) {
  std::vector<std::string> changes;
  for (std::size_t i = 0; i < replay["steps"].size(); ++i)
    for (const nlohmann::json &change : replay["steps"][i]["changes"]) {
      std::array<char, 16> bytes{};
      std::snprintf(bytes.data(), bytes.size(), "%02x -&gt; %02x",
                    change["before"].get<unsigned>(),
                    change["after"].get<unsigned>());
      changes.push_back(std::to_string(i + 1) + " " +
                        change["region"].get<std::string>() + "+" +
                        std::to_string(change["offset"].get<std::size_t>()) +
                        " " + bytes.data());
    }
  return changes;
}

// The badge a holding check's report calls for: green only when nothing
// qualifies it.
std::string badge_of(const nlohmann::json &report) {
  if (!report["qualified"].get<bool>())
    return R"(<span class="verdict holds" id="verdict">holds</span>)";
  return R"(<span class="verdict qualified" id="verdict">)" +
         (report["complete"].get<bool>()
              ? std::string("holds, with caveats")
              : "holds up to depth " + report["max_depth"].dump()) +
         "</span>";
}

// The text report's first line, as the DOM shows text.
std::string headline_of(const std::string &text) {
  return in_dom(text.substr(0, text.find('\n')));
}

std::vector<std::string> lock_check(const std::string &server,
                                    const TempDir &dir) {
  return {"check",        "-q",          "--json",
          dir / "r.json", "--html",      dir / "r.html",
          "--max-depth",  "3",           "--region",
          "held",         "--invariant", "exclusive",
          "--client",     "A",           "-m",
          "LOCK\\n",      "-m",          "UNLOCK\\n",
          "--client",     "B",           "-m",
          "LOCK\\n",      "-m",          "UNLOCK\\n",
          "--",           demo(server),  "7000"};
}

TEST(HtmlPage, ShowsTheCounterexampleAsASequenceChart) {
  const TempDir dir;
  const Outcome check = run_cmc(lock_check("lock_server_bug", dir));
  ASSERT_EQ(check.status, 1) << check.err;
  EXPECT_EQ(check.err, "");
  expect_self_contained(read_file(dir / "r.html"));
  const Outcome replay = run_cmc(
      {"replay", "--from", dir / "r.json", "--json", dir / "replay.json"});
  ASSERT_EQ(replay.status, 1) << replay.err;
  const auto expected = nlohmann::json::parse(read_file(dir / "replay.json"));
  const auto report = nlohmann::json::parse(read_file(dir / "r.json"));

  const Rendered rendered = render(dir / "r.html", dir);
  if (!rendered.failure.empty())
    GTEST_SKIP() << rendered.failure;
  const std::string &dom = rendered.dom;
  EXPECT_EQ(lifelines_in(dom),
            (std::vector<std::string>{"A", "B", "lock_server_bug"}));
  const std::vector<Arrow> arrows =
      arrows_of(expected, {"A", "B"}, "lock_server_bug");
  ASSERT_EQ(report["counterexample"].size(), expected["steps"].size());
  // A message and a reply per step at least.
  ASSERT_GE(arrows.size(), 2 * expected["steps"].size());
  EXPECT_EQ(arrows_in(dom), arrows);
  EXPECT_EQ(changes_in(dom), changes_of(expected));
  EXPECT_FALSE(changes_in(dom).empty());
  const std::string last = std::to_string(report["counterexample"].size());
  EXPECT_EQ(expected["violation_step"], report["counterexample"].size());
  EXPECT_TRUE(
      has(dom, R"(<g class="step violating" data-step=")" + last + "\">"))
      << dom;
  EXPECT_TRUE(has(dom, R"(<p class="what violation" id="violation">)" +
                           in_dom(report["violation"]) + "</p>"))
      << dom;
  EXPECT_TRUE(has(dom, R"(<span class="verdict violated" id="verdict">)"));
  // The state graph of --dot, drawn by Graphviz: a node per state.
  EXPECT_TRUE(has(dom, R"(<div class="figure graph" id="graph"><svg)"));
  EXPECT_EQ(count_of(dom, R"(class="node")"), report["distinct_states"]);
}

// With the whole process as the state, each step of the chart has its
// changes by name beside it: heap_kv_bug's SET a frees b's node.
TEST(HtmlPage, TheChartNamesWhatEachStepChangedInTheWholeProcess) {
  const TempDir dir;
  const Outcome check = run_cmc(
      {"check", "-q", "--json", dir / "r.json", "--html", dir / "r.html",
       "--property", plugin("list_sticky"), "-m", "SET a\\nGET\\n", "-m",
       "SET b\\nGET\\n", "--", demo("heap_kv_bug"), "7000"});
  ASSERT_EQ(check.status, 1) << check.err;
  const std::string page = read_file(dir / "r.html");
  EXPECT_TRUE(has(page, "what each step changed")) << page;
  const Rendered rendered = render(dir / "r.html", dir);
  if (!rendered.failure.empty())
    GTEST_SKIP() << rendered.failure;
  const std::vector<std::string> changes = changes_in(rendered.dom);
  const auto shown = [&](const std::string &change) {
    return std::find(changes.begin(), changes.end(), change) != changes.end();
  };
  EXPECT_TRUE(shown(in_dom("1 heap chunk 1 (24 B) allocated: 0 \"b\" 0")))
      << rendered.dom;
  EXPECT_TRUE(shown(in_dom("2 heap chunk 1 (24 B) freed: 0 \"b\" 0")))
      << rendered.dom;
  EXPECT_TRUE(shown(in_dom("2 heap chunk 1 (24 B) allocated: 0 \"a\" 0")))
      << rendered.dom;
}

TEST(HtmlPage, AHoldingCheckShowsVerdictCountsAndGraphWithoutAChart) {
  const TempDir dir;
  std::vector<std::string> args = lock_check("lock_server", dir);
  // A message of any bytes: shown escaped, never as markup.
  args.insert(args.end() - 3, {"-m", "<i>&\\xff\\n"});
  const Outcome check = run_cmc(args);
  ASSERT_EQ(check.status, 0) << check.err;
  expect_self_contained(read_file(dir / "r.html"));
  const auto report = nlohmann::json::parse(read_file(dir / "r.json"));

  const Rendered rendered = render(dir / "r.html", dir);
  if (!rendered.failure.empty())
    GTEST_SKIP() << rendered.failure;
  const std::string &dom = rendered.dom;
  EXPECT_TRUE(has(dom, badge_of(report))) << dom;
  EXPECT_TRUE(has(dom, headline_of(check.out))) << dom;
  EXPECT_FALSE(has(dom, R"(id="chart")")) << dom;
  EXPECT_EQ(count_of(dom, R"(class="node")"), report["distinct_states"]);
  EXPECT_FALSE(has(dom, R"(id="violation")"));
  for (const auto &[name, key] :
       {std::pair{"distinct states", "distinct_states"},
        {"dedup merges", "dedup_merges"},
        {"transitions", "transitions"},
        {"depth", "max_depth"}})
    EXPECT_TRUE(has(dom, std::string("<tr><th>") + name + "</th><td>" +
                             report[key].dump() + "</td></tr>"))
        << name << " in " << dom;
  EXPECT_TRUE(has(dom, "&lt;i&gt;&amp;\\xff\\n")) << dom;
  EXPECT_FALSE(has(dom, "<i>"));
}

// The page of a check of a demo server with args, its text report and JSON
// report beside it; rendered.failure says why the browser did not render.
struct Page {
  Outcome check;
  std::string report_text; // the JSON report
  Rendered rendered;
  [[nodiscard]] nlohmann::json report() const {
    return nlohmann::json::parse(report_text);
  }
};

Page kv_page(const std::string &server, std::vector<std::string> args,
             const TempDir &dir) {
  std::vector<std::string> command{"check",        "-q",     "--json",
                                   dir / "r.json", "--html", dir / "r.html"};
  command.insert(command.end(), args.begin(), args.end());
  command.insert(command.end(), {"--", demo(server), "7000"});
  Page page;
  page.check = run_cmc(command);
  if (page.check.status != 0 && page.check.status != 1)
    return page;
  page.report_text = read_file(dir / "r.json");
  expect_self_contained(read_file(dir / "r.html"));
  page.rendered = render(dir / "r.html", dir);
  return page;
}

// The caveats the page lists by its badge.
std::vector<std::string> caveats_in(const std::string &dom) {
  const std::size_t list = dom.find(R"(<ul class="caveats" id="caveats">)");
  if (list == std::string::npos)
    return {};
  const std::string items = dom.substr(list, dom.find("</ul>", list) - list);
  static const std::regex kItem("<li>([^<]*)</li>");
  std::vector<std::string> caveats;
  for (auto it = std::sregex_iterator(items.begin(), items.end(), kItem);
       it != std::sregex_iterator(); ++it)
    caveats.push_back((*it)[1]);
  return caveats;
}

std::vector<std::string> in_dom(const nlohmann::json &lines) {
  std::vector<std::string> shown_lines;
  for (const nlohmann::json &line : lines)
    shown_lines.push_back(in_dom(line.get<std::string>()));
  return shown_lines;
}

// kv with the whole process as the state (no abstraction), its cells'
// property, a complete search: green.
TEST(HtmlPage, APlainCompleteHoldsIsGreen) {
  const TempDir dir;
  const Page page =
      kv_page("kv",
              {"-m", "SET a\\n", "-m", "SET b\\n", "--dedup", "process",
               "--region", "cmc_state", "--invariant", "sticky"},
              dir);
  ASSERT_EQ(page.check.status, 0) << page.check.err;
  const nlohmann::json report = page.report();
  EXPECT_EQ(report["qualified"], false) << page.check.out;
  EXPECT_EQ(report["caveats"], nlohmann::json::array());
  const std::string headline = fmt::format(
      "holds: {} distinct states, {} dedup merges, {} transitions; every "
      "reachable state explored (depth {})",
      report["distinct_states"].get<std::size_t>(),
      report["dedup_merges"].get<std::size_t>(),
      report["transitions"].get<std::size_t>(),
      report["max_depth"].get<std::size_t>());
  EXPECT_TRUE(page.check.out.starts_with(headline + "\n")) << page.check.out;
  if (!page.rendered.failure.empty())
    GTEST_SKIP() << page.rendered.failure;
  const std::string &dom = page.rendered.dom;
  EXPECT_TRUE(
      has(dom, R"(<span class="verdict holds" id="verdict">holds</span>)"))
      << dom;
  EXPECT_TRUE(
      has(dom, R"(<p class="headline" id="headline">)" + headline + "</p>"))
      << dom;
  EXPECT_EQ(caveats_in(dom), std::vector<std::string>{});
  EXPECT_EQ(count_of(dom, R"(class="node")"), report["distinct_states"]);
}

// One cell of two as the region: states that differ in the other merge.
TEST(HtmlPage, ALossyAbstractionIsNotGreen) {
  const TempDir dir;
  const Page page = kv_page("kv",
                            {"-m", "SET a\\n", "-m", "SET b\\n", "--region",
                             "cmc_state:1", "--invariant", "sticky"},
                            dir);
  ASSERT_EQ(page.check.status, 0) << page.check.err;
  ASSERT_GT(page.report()["abstraction"]["lossy_merges"], 0) << page.check.out;
  ASSERT_EQ(page.report()["complete"], true);
  EXPECT_EQ(page.report()["qualified"], true);
  if (!page.rendered.failure.empty())
    GTEST_SKIP() << page.rendered.failure;
  const std::string &dom = page.rendered.dom;
  EXPECT_FALSE(has(dom, R"(<span class="verdict holds")")) << dom;
  EXPECT_TRUE(has(dom, R"(<span class="verdict qualified" id="verdict">)"
                       "holds, with caveats</span>"))
      << dom;
  const std::string headline = headline_of(page.check.out);
  EXPECT_TRUE(has(headline, "holds under the region abstraction: "))
      << headline;
  EXPECT_TRUE(has(headline, " merges joined states that differ elsewhere"));
  EXPECT_TRUE(has(dom, headline)) << dom;
}

// No invariant and no region: crashes, exits and hangs only, said by the
// badge as the text says it.
TEST(HtmlPage, ACheckWithoutAPropertySaysSo) {
  const TempDir dir;
  const Page page = kv_page("kv", {"-m", "SET a\\n", "-m", "SET b\\n"}, dir);
  ASSERT_EQ(page.check.status, 0) << page.check.err;
  const std::string caveat =
      "no invariant and no property: checked crashes, exits and hangs only";
  EXPECT_TRUE(has(page.check.out, "\n" + caveat + "\n")) << page.check.out;
  EXPECT_EQ(page.report()["checked"], "crashes, exits and hangs only");
  if (!page.rendered.failure.empty())
    GTEST_SKIP() << page.rendered.failure;
  const std::string &dom = page.rendered.dom;
  EXPECT_TRUE(has(dom, R"(<span class="verdict qualified" id="verdict">)"
                       "holds, with caveats</span>"))
      << dom;
  EXPECT_EQ(caveats_in(dom), in_dom(page.report()["caveats"]));
  EXPECT_TRUE(std::ranges::count(caveats_in(dom), caveat) == 1) << dom;
}

TEST(HtmlPage, ABoundedCheckSaysItsBound) {
  const TempDir dir;
  const Page page =
      kv_page("kv",
              {"-m", "SET a\\n", "-m", "SET b\\n", "--region", "cmc_state",
               "--invariant", "sticky", "--max-depth", "1"},
              dir);
  ASSERT_EQ(page.check.status, 0) << page.check.err;
  EXPECT_TRUE(page.check.out.starts_with("holds up to depth 1: 3 distinct "
                                         "states"))
      << page.check.out;
  if (!page.rendered.failure.empty())
    GTEST_SKIP() << page.rendered.failure;
  const std::string &dom = page.rendered.dom;
  EXPECT_TRUE(has(dom, R"(<span class="verdict qualified" id="verdict">)"
                       "holds up to depth 1</span>"))
      << dom;
  EXPECT_TRUE(has(dom, R"(<p class="headline" id="headline">)" +
                           headline_of(page.check.out) + "</p>"))
      << dom;
}

// Per level, the states, the transitions from them and the merges among
// those, as the page's table lists them.
std::vector<std::array<std::size_t, 4>> levels_in(const std::string &dom) {
  static const std::regex kLevel(
      R"(<tr><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>)");
  const std::size_t table = dom.find(R"(<table id="levels">)");
  if (table == std::string::npos)
    return {};
  const std::string rows =
      dom.substr(table, dom.find("</table>", table) - table);
  std::vector<std::array<std::size_t, 4>> levels;
  for (auto it = std::sregex_iterator(rows.begin(), rows.end(), kLevel);
       it != std::sregex_iterator(); ++it)
    levels.push_back({std::stoul((*it)[1]), std::stoul((*it)[2]),
                      std::stoul((*it)[3]), std::stoul((*it)[4])});
  return levels;
}

// kv with each path its own state, 8 steps deep: 256 states at depth 8,
// 511 in all, summarised on the page; --dot keeps every one.
TEST(HtmlPage, AGraphTooWideToReadIsSummarised) {
  const TempDir dir;
  const Page page =
      kv_page("kv",
              {"-m", "SET a\\n", "-m", "SET b\\n", "--region", "cmc_state",
               "--dedup", "path", "--max-depth", "8", "--dot", dir / "g.dot"},
              dir);
  ASSERT_EQ(page.check.status, 0) << page.check.err;
  ASSERT_EQ(page.report()["distinct_states"], 511);
  const std::string dot = read_file(dir / "g.dot");
  EXPECT_EQ(count_of(dot, "[label=\"#"), 511U) << "--dot has every state";
  if (!page.rendered.failure.empty())
    GTEST_SKIP() << page.rendered.failure;
  const std::string &dom = page.rendered.dom;
  EXPECT_TRUE(has(dom, R"(<p id="graph-summary">511 states, up to 256 at )"
                       "one depth: too wide"))
      << dom;
  std::vector<std::array<std::size_t, 4>> expected;
  for (std::size_t depth = 0; depth <= 8; ++depth)
    expected.push_back({depth, std::size_t{1} << depth,
                        depth < 8 ? std::size_t{2} << depth : 0, 0});
  EXPECT_EQ(levels_in(dom), expected);
  // Nothing drawn without a counterexample: no node of the graph.
  EXPECT_FALSE(has(dom, R"(id="graph")")) << dom;
  EXPECT_EQ(count_of(dom, R"(class="node")"), 0U);
}

// kv_bug with each path its own state and 5 more messages (each answered
// ERR) before SET b and SET a: 7 states at depth 1, and at depth 2 the 35
// after X0 to X4 before the search reaches [SET b, SET a], too wide. Drawn:
// the initial state, the 7 one step from it and the 7 one step from [SET
// b] (the violating state among them), never the 35.
TEST(HtmlPage, AWideGraphDrawsTheCounterexamplesNeighbourhood) {
  const TempDir dir;
  std::vector<std::string> args;
  for (int i = 0; i < 5; ++i)
    args.insert(args.end(), {"-m", "X" + std::to_string(i) + "\\n"});
  args.insert(args.end(),
              {"-m", "SET b\\n", "-m", "SET a\\n", "--region", "cmc_state",
               "--invariant", "sticky", "--dedup", "path", "--max-depth", "2"});
  const Page page = kv_page("kv_bug", args, dir);
  ASSERT_EQ(page.check.status, 1) << page.check.err;
  ASSERT_EQ(page.report()["counterexample"].size(), 2U);
  if (!page.rendered.failure.empty())
    GTEST_SKIP() << page.rendered.failure;
  const std::string &dom = page.rendered.dom;
  EXPECT_TRUE(has(dom, R"(<p id="graph-summary">)")) << dom;
  const auto levels = levels_in(dom);
  ASSERT_EQ(levels.size(), 3U) << dom;
  EXPECT_EQ(levels[1][1], 7U);
  EXPECT_GT(levels[2][1], 40U) << dom;
  EXPECT_EQ(levels[0][1] + levels[1][1] + levels[2][1],
            page.report()["distinct_states"]);
  ASSERT_TRUE(has(dom, R"(<div class="figure graph" id="graph"><svg)"));
  EXPECT_TRUE(has(dom, "drawn are the counterexample and the states one "
                       "step from it"))
      << dom;
  const std::size_t nodes = count_of(dom, R"(class="node")");
  const std::size_t after_x = std::size_t{5} * 7;
  EXPECT_EQ(nodes, 1 + 7 + 7U) << dom;
  EXPECT_EQ(nodes + after_x, page.report()["distinct_states"]) << dom;
}

TEST(HtmlPage, AFileThatCannotBeWrittenIsAUsageError) {
  const Outcome run =
      run_cmc({"check", "-m", "SET a\\n", "--html", "/nonexistent/r.html", "--",
               demo("kv"), "7000"});
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(run.err.starts_with("cmc: cannot write --html "
                                  "/nonexistent/r.html: No such file or "
                                  "directory\n"))
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  const Outcome empty = run_cmc(
      {"check", "-m", "SET a\\n", "--html", "", "--", demo("kv"), "7000"});
  EXPECT_EQ(empty.status, 2) << empty.err;
}

} // namespace
} // namespace cmc::testing
