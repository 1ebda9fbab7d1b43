#include "app/report/step_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "decoder/state_changes.h"
#include "util/escape.h"

namespace cmc::app {

void print_calls(const std::vector<tracer::TracedCall> &calls,
                 const char *indent, const TraceOutput &out) {
  std::FILE *file = out.file();
  if (file != out.text())
    indent = "";
  for (const tracer::TracedCall &call : calls) {
    if (!out.shows(call))
      continue;
    fmt::print(file, "{}{}{}\n", indent, call.parts.text(),
               call.vdso_function.empty()
                   ? ""
                   : fmt::format("  [vDSO {}]", call.vdso_function));
    for (std::size_t i = 0; i < call.backtrace.size(); ++i)
      fmt::print(file, "{}    #{} {}\n", indent, i,
                 executor::describe(call.backtrace[i]));
  }
}

std::vector<ByteChange>
name_changes(const std::vector<search::RegionLayout> &layout,
             std::span<const search::ChangedByte> changes) {
  std::vector<ByteChange> named;
  for (const search::ChangedByte &change : changes)
    for (const search::RegionLayout &region : layout)
      if (change.offset >= region.offset &&
          change.offset - region.offset < region.length)
        named.push_back({region.name, change.offset - region.offset,
                         change.before, change.after});
  return named;
}

std::string change_text(const ByteChange &change) {
  return fmt::format("{}+{} {:02x} -> {:02x}", change.region, change.offset,
                     change.before, change.after);
}

std::vector<ByteChange>
changes_of(const std::vector<search::RegionLayout> &layout,
           std::span<const std::byte> before,
           std::span<const std::byte> after) {
  return name_changes(layout, search::changed_bytes(before, after));
}

nlohmann::json calls_json(const std::vector<tracer::TracedCall> &calls) {
  nlohmann::json json = nlohmann::json::array();
  for (const tracer::TracedCall &call : calls)
    json.push_back({{"name", call.parts.name},
                    {"args", call.parts.args},
                    {"result", call.parts.result},
                    {"text", call.parts.text()}});
  return json;
}

nlohmann::json changes_json(const std::vector<ByteChange> &changes) {
  nlohmann::json json = nlohmann::json::array();
  for (const ByteChange &change : changes)
    json.push_back({{"region", change.region},
                    {"offset", change.offset},
                    {"before", change.before},
                    {"after", change.after}});
  return json;
}

nlohmann::json replies_json(const tracer::TargetSpec &spec,
                            const std::vector<std::string> &received) {
  nlohmann::json json = nlohmann::json::array();
  for (std::size_t client = 0; client < received.size(); ++client)
    if (!received[client].empty())
      json.push_back({{"client", spec.clients.empty()
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(spec.clients.at(client))},
                      {"bytes", received[client]}});
  return json;
}

void print_changes(std::FILE *out, const std::vector<ByteChange> &changes) {
  for (const ByteChange &change : changes)
    fmt::print(out, "  changed: {}\n", change_text(change));
  if (changes.empty())
    fmt::print(out, "  changed: nothing in the regions\n");
}

bool whole_process(const tracer::TargetSpec &spec) {
  return spec.state == executor::StateKind::kProcess ||
         spec.state == executor::StateKind::kRaw;
}

Result<ShownState> read_named_state(const tracer::TargetSpec &spec,
                                    const tracer::TargetRun &run,
                                    tracer::ProcessCapture &capture) {
  auto image = run.read_process(capture);
  if (!image)
    return image.error();
  auto files = run.read_files();
  if (!files)
    return files.error();
  const decoder::CanonicalOptions options{
      spec.state == executor::StateKind::kRaw ? decoder::HeapModel::kRaw
                                              : decoder::HeapModel::kCanonical,
      true,
      {}};
  return ShownState{decoder::canonicalize(*image, options), std::move(*files)};
}

namespace {

// "file ./journal written" for each file that differs.
void file_changes(const std::vector<executor::FileDigest> &before,
                  const std::vector<executor::FileDigest> &after,
                  std::vector<std::string> &lines) {
  const auto find = [](const std::vector<executor::FileDigest> &files,
                       const std::string &name) {
    return std::find_if(
        files.begin(), files.end(),
        [&](const executor::FileDigest &file) { return file.name == name; });
  };
  for (const executor::FileDigest &file : after) {
    const auto was = find(before, file.name);
    if (was == before.end())
      lines.push_back(fmt::format("file {} created", file.name));
    else if (was->hash != file.hash)
      lines.push_back(fmt::format("file {} written", file.name));
  }
  for (const executor::FileDigest &file : before)
    if (find(after, file.name) == after.end())
      lines.push_back(fmt::format("file {} removed", file.name));
}

} // namespace

std::vector<std::string> state_changes(const ShownState &before,
                                       const ShownState &after,
                                       std::size_t max_lines) {
  std::vector<std::string> lines;
  file_changes(before.files, after.files, lines);
  auto process =
      decoder::describe_changes(before.process, after.process, max_lines);
  lines.insert(lines.end(), process.begin(), process.end());
  return lines;
}

void print_state_changes(std::FILE *out,
                         const std::vector<std::string> &lines) {
  for (const std::string &line : lines)
    fmt::print(out, "  changed: {}\n", line);
  if (lines.empty())
    fmt::print(out, "  changed: nothing\n");
}

void print_responses(std::FILE *out, const tracer::TargetSpec &spec,
                     const std::vector<std::string> &received) {
  bool any = false;
  for (std::size_t client = 0; client < received.size(); ++client) {
    if (spec.clients.empty() || received[client].empty())
      continue;
    fmt::print(out, "  response to {}: \"{}\"\n", spec.clients.at(client),
               encode_escapes(received[client]));
    any = true;
  }
  if (!any)
    fmt::print(out, "  response: \"{}\"\n",
               encode_escapes(received.empty() ? "" : received.front()));
}

namespace {

std::string client_name(const tracer::TargetSpec &spec, std::size_t client) {
  return spec.clients.empty() ? "the client" : spec.clients.at(client);
}

bool dropped(const executor::StepEffects &effects, std::size_t client) {
  return std::find(effects.dropped.begin(), effects.dropped.end(), client) !=
         effects.dropped.end();
}

} // namespace

void print_effects(std::FILE *out, const tracer::TargetSpec &spec,
                   const executor::StepEffects &effects, bool always) {
  if (effects.read_short() || (always && effects.read_whole())) {
    if (effects.read)
      fmt::print(out, "  read: {} of {} bytes of the message\n", *effects.read,
                 *effects.length);
    else
      fmt::print(out,
                 "  read: not all of the {} bytes of the message (the "
                 "server closed the connection with bytes unread)\n",
                 *effects.length);
  }
  for (const std::size_t client : effects.closed)
    fmt::print(out, "  closed by the server: {}{}\n", client_name(spec, client),
               dropped(effects, client) ? " (bytes it never read were dropped)"
                                        : "");
  for (const std::string &preempted : effects.preempted)
    fmt::print(out, "  preempted: {}\n", preempted);
}

std::string effects_note(const tracer::TargetSpec &spec,
                         const executor::StepEffects &effects) {
  std::vector<std::string> notes;
  if (effects.read_short())
    notes.push_back(effects.read ? fmt::format("target read {} of {} bytes",
                                               *effects.read, *effects.length)
                                 : "target did not read it all");
  for (const std::size_t client : effects.closed)
    notes.push_back(
        spec.clients.empty()
            ? std::string("closed by the server")
            : fmt::format("{} closed by the server", spec.clients.at(client)));
  notes.insert(notes.end(), effects.preempted.begin(), effects.preempted.end());
  if (notes.empty())
    return "";
  return fmt::format(" ({})", fmt::join(notes, "; "));
}

} // namespace cmc::app
