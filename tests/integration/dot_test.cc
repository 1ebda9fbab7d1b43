// cmc check --dot: the explored state graph in Graphviz DOT, drawn by
// Graphviz's own dot (Debian's graphviz, scripts/setup.sh).

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

// A file in the temporary directory, removed with the fixture.
class Dot : public ::testing::Test {
protected:
  std::string file(const std::string &name) {
    files_.push_back((std::filesystem::temp_directory_path() /
                      ("cmc-dot-" + std::to_string(getpid()) + "-" + name))
                         .string());
    return files_.back();
  }
  void TearDown() override {
    for (const std::string &path : files_)
      std::filesystem::remove(path);
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }

private:
  std::vector<std::string> files_;
};

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Graphviz's dot -Tsvg of the file: the SVG, or "" when dot failed (what
// it said goes to the test's output).
std::string svg_of(const std::string &path) {
  FILE *pipe = popen(("dot -Tsvg " + path).c_str(), "r");
  if (pipe == nullptr)
    return "";
  std::string svg;
  std::array<char, 4096> buffer{};
  for (std::size_t n;
       (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    svg.append(buffer.data(), n);
  return pclose(pipe) == 0 ? svg : "";
}

// An edge line of cmc's DOT, its label unescaped.
struct DotEdge {
  std::string from;
  std::string to;
  std::string label;
  bool red = false;
};

std::vector<DotEdge> edges_of(const std::string &dot) {
  static const std::regex kEdge(
      R"re(^  (s\d+) -> (s\d+|fault) \[label="((?:[^"\\]|\\.)*)"(.*)\];$)re");
  std::vector<DotEdge> edges;
  std::istringstream lines(dot);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (!std::regex_match(line, match, kEdge))
      continue;
    const std::string label =
        std::regex_replace(match[3].str(), std::regex(R"(\\(.))"), "$1");
    edges.push_back({match[1], match[2], label,
                     match[4].str().find("color=red") != std::string::npos});
  }
  return edges;
}

// The labels of the red edges, followed from the initial state.
std::vector<std::string> red_path(const std::vector<DotEdge> &edges) {
  std::vector<std::string> labels;
  std::string at = "s0";
  for (bool found = true; found;) {
    found = false;
    for (const DotEdge &edge : edges)
      if (edge.red && edge.from == at && labels.size() < edges.size()) {
        labels.push_back(edge.label);
        at = edge.to;
        found = true;
        break;
      }
  }
  return labels;
}

std::vector<std::string> lock_check(const std::string &dot,
                                    const std::string &jobs) {
  return {"check",       "-q",
          "--client",    "A",
          "-m",          "LOCK\\n",
          "-m",          "UNLOCK\\n",
          "--client",    "B",
          "-m",          "LOCK\\n",
          "-m",          "UNLOCK\\n",
          "--region",    "held",
          "--invariant", "exclusive",
          "--json",      "-",
          "-j",          jobs,
          "--dot",       dot,
          "--",          demo("lock_server_bug"),
          "7000"};
}

// Every state a node, every transition an edge (the merges dashed), the
// counterexample's steps red from the initial state on; the same graph
// with one worker and two.
TEST_F(Dot, TheLockServerBugGraph) {
  const std::string one = file("j1.dot");
  const Outcome run = run_cmc(lock_check(one, "1"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  const std::string dot = read_text(one);
  const std::string svg = svg_of(one);
  ASSERT_FALSE(svg.empty()) << dot;
  EXPECT_EQ(count_of(svg, "class=\"node\""), json["distinct_states"]) << dot;
  EXPECT_EQ(count_of(svg, "class=\"edge\""), json["transitions"]) << dot;
  EXPECT_EQ(count_of(dot, "style=dashed"), json["dedup_merges"]) << dot;
  const std::vector<DotEdge> edges = edges_of(dot);
  EXPECT_EQ(edges.size(), json["transitions"]) << dot;
  EXPECT_EQ(red_path(edges), (std::vector<std::string>{R"(A: send "LOCK\n")",
                                                       R"(B: send "UNLOCK\n")",
                                                       R"(B: send "LOCK\n")"}))
      << dot;
  EXPECT_EQ(std::count_if(edges.begin(), edges.end(),
                          [](const DotEdge &edge) { return edge.red; }),
            3)
      << dot;
  EXPECT_TRUE(has(dot, R"(s0 [label="#0, initial state", peripheries=2)"))
      << dot;
  EXPECT_TRUE(has(dot, "violated: exclusive: byte 0 of held and byte 1 of "
                       "held are both set"))
      << dot;
  // B's LOCK, granted although A holds the lock, writes B's byte.
  EXPECT_TRUE(has(dot, R"(s9 [label="#9, depth 3\nheld+1 00 -> 02", )"
                       R"(color=red)"))
      << dot;

  const std::string two = file("j2.dot");
  const Outcome again = run_cmc(lock_check(two, "2"));
  ASSERT_EQ(again.status, 1) << again.err;
  EXPECT_EQ(read_text(two), dot);
}

// A whole-process state is labelled with what the step that found it
// changed, by name: kv's cells by their data object.
TEST_F(Dot, WholeProcessStatesNameWhatTheirStepChanged) {
  const std::string path = file("process.dot");
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--json", "-",
               "--dot", path, "--", demo("kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string dot = read_text(path);
  EXPECT_FALSE(has(dot, "whole process")) << dot;
  // Each state was found by a SET of a cell not set before (the others
  // merge): its label names that cell's byte, and the first SET a's is
  // byte 0.
  EXPECT_EQ(count_of(dot, ".bss of kv: cmc_state+"),
            run.json()["distinct_states"].get<std::size_t>() - 1)
      << dot;
  EXPECT_TRUE(std::regex_search(
      dot, std::regex(R"(s1 \[label="#1, depth 1\\n[^"]*)"
                      R"(\.bss of kv: cmc_state\+0 00 -> 01)")))
      << dot;
  EXPECT_FALSE(svg_of(path).empty()) << dot;
}

// kv with each path its own state, 8 steps deep: 511 states, every one in
// the file (the --html page summarises it; html_test).
TEST_F(Dot, AGraphOfManyStatesIsWrittenWhole) {
  const std::string path = file("paths.dot");
  const Outcome run =
      run_cmc({"check", "-q", "-m", "SET a\\n", "-m", "SET b\\n", "--region",
               "cmc_state", "--dedup", "path", "--max-depth", "8", "--json",
               "-", "--dot", path, "--", demo("kv"), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_EQ(run.json()["distinct_states"], 511);
  const std::string dot = read_text(path);
  const std::string svg = svg_of(path);
  ASSERT_FALSE(svg.empty()) << dot;
  EXPECT_EQ(count_of(svg, "class=\"node\""), 511U);
  // A tree: each state but the initial one has the edge that found it.
  EXPECT_EQ(count_of(svg, "class=\"edge\""), 510U);
  EXPECT_FALSE(has(dot, "left out")) << dot;
}

// A file that cannot be written stops the check before it starts: one
// line, exit 2, as --json's.
TEST_F(Dot, AFileThatCannotBeWrittenIsAUsageError) {
  const auto expect_usage = [](const std::string &dot,
                               const std::string &part) {
    const Outcome run = run_cmc({"check", "-q", "-m", "SET a\\n", "--dot", dot,
                                 "--", demo("kv"), "7000"});
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_TRUE(run.err.starts_with("cmc: ")) << run.err;
    EXPECT_EQ(count_of(run.err, "\n"), 1U) << run.err;
    EXPECT_TRUE(has(run.err, part)) << run.err;
  };
  expect_usage("/nonexistent-dir/graph.dot",
               "cannot write --dot /nonexistent-dir/graph.dot: No such file "
               "or directory");
  expect_usage("", "an empty value: give a file");
  expect_usage("-", "'-' looks like an option: give a file");
}

} // namespace
} // namespace cmc::testing
