#include "app/render/sequence_chart.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "app/render/html_text.h"
#include "app/report/json_bytes.h"
#include "util/escape.h"

namespace cmc::app {
namespace {

// The chart's measures in pixels. Its text is 13px monospace, whose
// characters are 0.6em wide (DejaVu Sans Mono, Liberation Mono): widths
// are counted, not measured, so the page needs no script.
constexpr double kCharWidth = 7.9;
constexpr int kRow = 30;     // one arrow and the label above it
constexpr int kHeadTop = 10; // the lifelines' name boxes
constexpr int kHead = 30;    // their height
constexpr int kTop = 60;     // the first step
constexpr int kMargin = 76;  // the step numbers, left of the lifelines
constexpr int kStepPad = 10; // below each step's last row
constexpr double kMinGap = 150;
constexpr double kMaxGap = 380;
constexpr double kMaxWidth = 1100;       // for the violation's line
constexpr std::size_t kLongestNote = 60; // characters of a change or violation

double width_of(std::size_t characters) {
  return static_cast<double>(characters) * kCharWidth;
}

// The bytes of a report's value; "?" when it holds none (the report is
// cmc's own, so only a bug would show it).
std::string bytes_in(const nlohmann::json &value) {
  auto bytes = bytes_of_json(value);
  return bytes ? *bytes : "?";
}

// What the target sent or received, as one line: C escapes, in quotes.
std::string quoted(const nlohmann::json &bytes) {
  return "\"" + encode_escapes(bytes_in(bytes)) + "\"";
}

struct Arrow {
  std::string kind;     // send, disconnect, reply, close, tick: its CSS class
  std::size_t from = 0; // lifelines: the clients, then the server
  std::size_t to = 0;
  std::string label; // not yet escaped
};

struct ChartStep {
  std::vector<Arrow> arrows;
  std::vector<std::string> notes; // the region changes
  bool violating = false;

  [[nodiscard]] double height() const {
    const std::size_t rows =
        std::max({arrows.size(), notes.size(), violating ? std::size_t{2} : 1});
    return static_cast<double>(rows) * kRow + kStepPad;
  }
};

struct Lifelines {
  std::vector<std::string> names; // the clients', then the server's
  [[nodiscard]] std::size_t server() const { return names.size() - 1; }

  // The lifeline of a step's or reply's "client": by name, the first
  // client when the check had one unnamed client.
  [[nodiscard]] std::size_t of(const nlohmann::json &client) const {
    if (client.is_null())
      return 0;
    const auto found =
        std::find(names.begin(), names.end() - 1, bytes_in(client));
    return found < names.end() - 1
               ? static_cast<std::size_t>(found - names.begin())
               : 0;
  }
};

Lifelines lifelines_of(const nlohmann::json &check) {
  Lifelines lifelines;
  const nlohmann::json &replay = check.at("replay");
  for (const nlohmann::json &client : replay.at("clients"))
    lifelines.names.push_back(bytes_in(client));
  if (lifelines.names.empty())
    lifelines.names.emplace_back("client");
  std::string server = "server";
  if (!replay.at("command").empty()) {
    server = bytes_in(replay.at("command").front());
    server.erase(0, server.rfind('/') + 1); // npos + 1: nothing
  }
  lifelines.names.push_back(server);
  return lifelines;
}

// The arrow of a step's own action: its message, disconnect, tick or
// crash.
Arrow action_arrow(const nlohmann::json &step, const Lifelines &lifelines) {
  const std::size_t client =
      lifelines.of(step.contains("client") ? step["client"] : nullptr);
  if (step.contains("tick"))
    return {"tick", lifelines.server(), lifelines.server(),
            "tick " + bytes_in(step["tick"])};
  if (step.contains("disconnect"))
    return {"disconnect", client, lifelines.server(), "disconnect"};
  if (step.contains("crash"))
    return {"crash", lifelines.server(), lifelines.server(),
            "crash and restart"};
  Arrow arrow{"send", client, lifelines.server(), quoted(step.at("send"))};
  if (step.contains("read"))
    arrow.label +=
        step["read"].is_null()
            ? " (not read whole)"
            : fmt::format(" (read {} bytes)", step["read"].get<std::size_t>());
  return arrow;
}

std::vector<ChartStep> chart_steps(const nlohmann::json &replay,
                                   const Lifelines &lifelines) {
  std::vector<ChartStep> steps;
  const nlohmann::json &violation_step = replay.at("violation_step");
  for (const nlohmann::json &step : replay.at("steps")) {
    ChartStep chart;
    chart.arrows.push_back(action_arrow(step, lifelines));
    for (const nlohmann::json &reply : step.at("replies"))
      chart.arrows.push_back({"reply", lifelines.server(),
                              lifelines.of(reply.at("client")),
                              quoted(reply.at("bytes"))});
    for (const nlohmann::json &client :
         step.value("closed_by_server", nlohmann::json::array()))
      chart.arrows.push_back({"close", lifelines.server(),
                              client.get<std::size_t>(),
                              "closed by the server"});
    // Where cmc's scheduler switched threads (--preemptions).
    for (const nlohmann::json &preempted :
         step.value("switches", nlohmann::json::array()))
      chart.notes.push_back("preempted: " + bytes_in(preempted));
    for (const nlohmann::json &change : step.at("changes"))
      chart.notes.push_back(fmt::format("{}+{} {:02x} -> {:02x}",
                                        bytes_in(change.at("region")),
                                        change.at("offset").get<std::size_t>(),
                                        change.at("before").get<unsigned>(),
                                        change.at("after").get<unsigned>()));
    // With the whole process as the state: its changes by name.
    for (const nlohmann::json &change :
         step.value("state_changes", nlohmann::json::array()))
      chart.notes.push_back(change.get<std::string>());
    chart.violating = violation_step.is_number() &&
                      violation_step.get<std::size_t>() == steps.size() + 1;
    steps.push_back(std::move(chart));
  }
  return steps;
}

// Text at most characters long: cut with an ellipsis. The whole text is
// the element's tooltip.
std::string fitted(const std::string &text, std::size_t characters) {
  if (text.size() <= characters)
    return html_escape(text);
  return html_escape(text.substr(0, characters > 1 ? characters - 1 : 0)) +
         "\u2026";
}

// Where the lifelines stand: far enough apart for each arrow's label
// between the two it joins, within bounds (longer labels are cut).
struct Geometry {
  double gap = kMinGap;
  double head = 0; // the width of a name box
  double notes_x = 0;
  double width = 0;
  std::vector<std::string> names; // the lifelines', escaped for HTML

  [[nodiscard]] double x(std::size_t lifeline) const {
    return kMargin + head / 2 + static_cast<double>(lifeline) * gap;
  }
};

Geometry geometry_of(const Lifelines &lifelines,
                     const std::vector<ChartStep> &steps,
                     std::size_t violation) {
  Geometry geometry;
  std::size_t longest_name = 0;
  for (const std::string &name : lifelines.names) {
    longest_name = std::max(longest_name, encode_escapes(name).size());
    geometry.names.push_back(html_escape(encode_escapes(name)));
  }
  geometry.head = std::min(width_of(longest_name) + 20, kMaxGap - 20);
  geometry.gap = std::max(kMinGap, geometry.head + 20);
  std::size_t longest_note = 0;
  for (const ChartStep &step : steps) {
    for (const Arrow &arrow : step.arrows) {
      const auto span =
          static_cast<double>(arrow.from > arrow.to ? arrow.from - arrow.to
                                                    : arrow.to - arrow.from);
      if (span > 0)
        geometry.gap =
            std::max(geometry.gap, (width_of(arrow.label.size()) + 30) / span);
    }
    for (const std::string &note : step.notes)
      longest_note = std::max(longest_note, note.size());
  }
  geometry.gap = std::min(geometry.gap, kMaxGap);
  geometry.notes_x = geometry.x(lifelines.server()) + geometry.head / 2 + 12;
  geometry.width =
      geometry.notes_x +
      width_of(std::clamp<std::size_t>(longest_note, 24, kLongestNote)) + 20;
  // The violation's line below the steps, as far as kMaxWidth allows.
  geometry.width =
      std::max(geometry.width, std::min(width_of(violation) + 40, kMaxWidth));
  return geometry;
}

void draw_heads(std::string &svg, const Lifelines &lifelines,
                const Geometry &geometry, double bottom) {
  for (std::size_t i = 0; i < lifelines.names.size(); ++i) {
    const double x = geometry.x(i);
    const bool server = i == lifelines.server();
    svg += fmt::format(
        R"(<g class="lifeline{}" data-name="{}">)"
        R"(<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{:.1f}"/>)"
        R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" rx="4"/>)"
        R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text></g>)"
        "\n",
        server ? " server" : "", geometry.names[i], x, kHeadTop + kHead, x,
        bottom, x - geometry.head / 2, kHeadTop, geometry.head, kHead, x,
        kHeadTop + 20,
        fitted(encode_escapes(lifelines.names[i]),
               static_cast<std::size_t>((geometry.head - 12) / kCharWidth)));
  }
}

// An arrow in the row whose top is y; a tick or crash is a mark on the
// server's lifeline with its label to the left.
void draw_arrow(std::string &svg, const Arrow &arrow, std::size_t step,
                const Geometry &geometry, double y) {
  const double line_y = y + 22;
  svg += fmt::format(R"(<g class="arrow {}" data-step="{}" data-from="{}" )"
                     R"(data-to="{}">)",
                     arrow.kind, step, geometry.names.at(arrow.from),
                     geometry.names.at(arrow.to));
  svg += "<title>" + html_escape(arrow.label) + "</title>";
  if (arrow.from == arrow.to) {
    const double x = geometry.x(arrow.to);
    svg += fmt::format(
        R"(<circle cx="{:.1f}" cy="{:.1f}" r="6"/>)"
        R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text></g>)"
        "\n",
        x, line_y - 4, x - 12, line_y, fitted(arrow.label, kLongestNote));
    return;
  }
  const double from = geometry.x(arrow.from);
  const double to = geometry.x(arrow.to);
  const double direction = to > from ? 1 : -1;
  const double span = std::abs(to - from);
  const auto room = static_cast<std::size_t>((span - 16) / kCharWidth);
  svg += fmt::format(
      R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)"
      R"(<polygon points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)"
      R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text></g>)"
      "\n",
      from, line_y, to - direction * 9, line_y, to, line_y, to - direction * 10,
      line_y - 5, to - direction * 10, line_y + 5, (from + to) / 2, y + 15,
      fitted(arrow.label, room));
}

// A step's band across the chart, its number at the left; the step of the
// violation on a red band.
void draw_band(std::string &svg, const ChartStep &step, std::size_t number,
               const Geometry &geometry, double y) {
  const char *kind = step.violating    ? " violating"
                     : number % 2 == 0 ? " even"
                                       : "";
  svg += fmt::format(
      R"(<g class="step{}" data-step="{}"><rect class="band" x="4" )"
      R"(y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
      R"(<text class="number" x="12" y="{:.1f}">{}{}</text>)",
      kind, number, y, geometry.width - 8, step.height(), y + 19, number,
      step.violating ? " \u2717" : "");
  if (step.violating)
    svg += fmt::format(R"(<text class="violation-mark" x="12" y="{:.1f}">)"
                       "violation</text>",
                       y + 19 + kRow);
  svg += "</g>\n";
}

// A step's arrows, one per row, and its changes beside the server.
void draw_contents(std::string &svg, const ChartStep &step, std::size_t number,
                   const Geometry &geometry, double y) {
  for (std::size_t i = 0; i < step.arrows.size(); ++i)
    draw_arrow(svg, step.arrows[i], number, geometry,
               y + static_cast<double>(i) * kRow);
  for (std::size_t i = 0; i < step.notes.size(); ++i)
    svg += fmt::format(
        R"(<text class="change" data-step="{}" x="{:.1f}" y="{:.1f}">{}</text>)"
        "\n",
        number, geometry.notes_x, y + static_cast<double>(i) * kRow + 19,
        fitted(step.notes[i], kLongestNote));
}

constexpr const char *kChartStyle =
    "<style>"
    ".chart text{font:13px monospace;fill:#202124;paint-order:stroke;"
    "stroke:#fff;stroke-width:4px;stroke-linejoin:round}"
    ".chart .lifeline line{stroke:#9aa0a6;stroke-width:1.5;"
    "stroke-dasharray:5 4}"
    ".chart .lifeline.server line{stroke:#3c4043;stroke-dasharray:none}"
    ".chart .lifeline rect{fill:#e8f0fe;stroke:#1a73e8}"
    ".chart .lifeline.server rect{fill:#e6f4ea;stroke:#188038}"
    ".chart .lifeline text{font-weight:bold;stroke:none}"
    ".chart .band{fill:#fff;stroke:none}"
    ".chart .step.even .band{fill:#f8f9fa}"
    ".chart .step.violating .band{fill:#fce8e6;stroke:#d93025;"
    "stroke-width:1.5}"
    ".chart .number{font-weight:bold;stroke:none}"
    ".chart .violating .number,.chart .violation-mark,.chart .violation"
    "{fill:#d93025;stroke:none}"
    ".chart .arrow line{stroke:#1a73e8;stroke-width:1.5}"
    ".chart .arrow polygon{fill:#1a73e8}"
    ".chart .reply line{stroke:#188038;stroke-dasharray:6 3}"
    ".chart .reply polygon{fill:#188038}"
    ".chart .disconnect line,.chart .close line{stroke:#b06000;"
    "stroke-dasharray:2 3}"
    ".chart .disconnect polygon,.chart .close polygon{fill:#b06000}"
    ".chart .tick circle{fill:#fff;stroke:#3c4043;stroke-width:1.5}"
    ".chart .crash circle{fill:#d93025;stroke:#3c4043;stroke-width:1.5}"
    ".chart .change{fill:#a142f4}"
    ".chart .notes-head{fill:#5f6368;font-style:italic;stroke:none}"
    "</style>";

} // namespace

std::string sequence_chart(const nlohmann::json &check,
                           const nlohmann::json &replay) {
  const Lifelines lifelines = lifelines_of(check);
  const std::vector<ChartStep> steps = chart_steps(replay, lifelines);
  const bool violated = replay.at("violation_step").is_number();
  const std::string violation =
      violated
          ? "\u2717 violated: " + printable(bytes_in(replay.at("violation")))
          : "";
  const Geometry geometry = geometry_of(lifelines, steps, violation.size());
  std::vector<double> tops;
  double height = kTop;
  for (const ChartStep &step : steps) {
    tops.push_back(height);
    height += step.height();
  }
  const double bottom = height + (violated ? kRow : 0) + 10;
  std::string svg =
      fmt::format(R"(<svg class="chart" width="{:.0f}" height="{:.0f}" )"
                  R"(viewBox="0 0 {:.0f} {:.0f}" role="img">)",
                  geometry.width, bottom, geometry.width, bottom);
  svg += kChartStyle;
  svg += "\n";
  // Bands below lifelines below arrows: nothing hides a label.
  for (std::size_t i = 0; i < steps.size(); ++i)
    draw_band(svg, steps[i], i + 1, geometry, tops[i]);
  draw_heads(svg, lifelines, geometry, height);
  if (!check.at("replay").at("regions").empty() ||
      std::ranges::any_of(replay.at("steps"), [](const nlohmann::json &step) {
        return !step.value("state_changes", nlohmann::json::array()).empty();
      }))
    svg += fmt::format(R"(<text class="notes-head" x="{:.1f}" y="{}">)"
                       "{}</text>\n",
                       geometry.notes_x, kHeadTop + 20,
                       check.at("replay").at("regions").empty()
                           ? "what each step changed"
                           : "region changes");
  for (std::size_t i = 0; i < steps.size(); ++i)
    draw_contents(svg, steps[i], i + 1, geometry, tops[i]);
  if (violated) {
    const auto room =
        static_cast<std::size_t>((geometry.width - 24) / kCharWidth);
    svg += fmt::format(R"(<text class="violation" x="12" y="{:.1f}">{}</text>)",
                       height + 20, fitted(violation, room));
  }
  return svg + "</svg>";
}

} // namespace cmc::app
