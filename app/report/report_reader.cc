#include "app/report/report_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/report/json_bytes.h"
#include "decoder/region.h"
#include "util/duration.h"
#include "util/escape.h"

namespace cmc::app {
namespace {

using nlohmann::json;

// The member key of object, or nullptr when it is absent or null.
const json *member(const json &object, const char *key) {
  const auto found = object.find(key);
  return found == object.end() || found->is_null() ? nullptr : &*found;
}

// Reads typed fields and keeps the first error; after one, every read
// gives a default value, so the caller checks failed() once at the end.
class Fields {
public:
  [[nodiscard]] bool failed() const { return error_.has_value(); }
  [[nodiscard]] const Error &error() const { return *error_; }

  void fail(const std::string &path, const std::string &what) {
    if (!error_)
      error_ = Error{fmt::format("{}: {}", path, what)};
  }

  // A string, or the bytes of a json_bytes object.
  std::string bytes(const json &value, const std::string &path) {
    auto bytes = bytes_of_json(value);
    if (bytes)
      return std::move(*bytes);
    fail(path, bytes.error().message);
    return "";
  }

  std::vector<std::string> list(const json &value, const std::string &path) {
    std::vector<std::string> items;
    if (!value.is_array()) {
      fail(path, "expected an array of strings");
      return items;
    }
    for (std::size_t i = 0; i < value.size(); ++i)
      items.push_back(bytes(value[i], fmt::format("{}[{}]", path, i)));
    return items;
  }

  bool flag(const json &value, const std::string &path) {
    if (value.is_boolean())
      return value.get<bool>();
    fail(path, "expected true or false");
    return false;
  }

  std::uint64_t number(const json &value, const std::string &path,
                       std::uint64_t least, std::uint64_t most) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() >= least &&
        value.get<std::uint64_t>() <= most)
      return value.get<std::uint64_t>();
    fail(path,
         fmt::format("expected a whole number from {} to {}", least, most));
    return least;
  }

private:
  std::optional<Error> error_;
};

// The "replay" object's lists and texts; absent or null ones stay empty.
void read_texts(Fields &fields, const json &replay, ReportPlan &plan) {
  TargetOptions &target = plan.target;
  const auto list = [&](const char *key, std::vector<std::string> &into) {
    if (const json *value = member(replay, key))
      into = fields.list(*value, fmt::format("replay.{}", key));
  };
  const auto text = [&](const char *key, std::string &into) {
    if (const json *value = member(replay, key))
      into = fields.bytes(*value, fmt::format("replay.{}", key));
  };
  list("command", target.command);
  list("clients", target.clients);
  list("regions", target.regions);
  list("properties", target.properties);
  list("writable", target.writable);
  text("forbid_response", target.forbid_response);
  text("invariant", target.invariant);
  text("program_hash", plan.program_hash);
}

// The "replay" object: what the check ran.
void read_target(Fields &fields, const json &replay, ReportPlan &plan) {
  if (!replay.is_object()) {
    fields.fail("replay", "expected an object");
    return;
  }
  read_texts(fields, replay, plan);
  TargetOptions &target = plan.target;
  if (const json *seed = member(replay, "seed"))
    target.seed = fields.number(*seed, "replay.seed", 0, UINT64_MAX);
  if (const json *port = member(replay, "port"))
    target.port = static_cast<std::uint16_t>(
        fields.number(*port, "replay.port", 1, UINT16_MAX));
  if (const json *aslr = member(replay, "aslr"))
    target.aslr = fields.flag(*aslr, "replay.aslr");
  if (const json *crash = member(replay, "crash"))
    target.crash = fields.flag(*crash, "replay.crash");
  const std::vector<std::string> invariants{"sticky", "exclusive", "none"};
  if (std::ranges::find(invariants, target.invariant) == invariants.end())
    fields.fail("replay.invariant",
                fmt::format("'{}' is not sticky, exclusive or none",
                            encode_escapes(target.invariant)));
  if (auto names = check_client_names(target.clients); !names)
    fields.fail("replay.clients", names.error().message);
  for (std::size_t i = 0; i < target.regions.size(); ++i)
    if (auto spec = decoder::parse_region_spec(target.regions[i]); !spec)
      fields.fail(fmt::format("replay.regions[{}]", i), spec.error().message);
}

// A tick step's duration: every tick step of a path ticks by the same.
void read_tick(Fields &fields, const json &tick, const std::string &path,
               std::string &check_tick) {
  const auto duration = tick.is_string()
                            ? parse_duration(tick.get<std::string>())
                            : Result<std::chrono::nanoseconds>(
                                  Error{"expected a duration string ('10s')"});
  if (!duration) {
    fields.fail(path, duration.error().message);
  } else if (check_tick.empty()) {
    check_tick = tick.get<std::string>();
  } else if (*parse_duration(check_tick) != *duration) {
    fields.fail(path, fmt::format("'{}' is not the tick of the steps before "
                                  "it ('{}')",
                                  tick.get<std::string>(), check_tick));
  }
}

// A step's preemption points: up to executor::kMaxPreemptions, ascending,
// each from 1.
std::vector<std::uint32_t> read_preemptions(Fields &fields, const json &preempt,
                                            const std::string &path) {
  std::vector<std::uint32_t> points;
  if (!preempt.is_array() || preempt.size() > executor::kMaxPreemptions) {
    fields.fail(path, fmt::format("expected an array of at most {} "
                                  "preemption points",
                                  executor::kMaxPreemptions));
    return points;
  }
  for (std::size_t i = 0; i < preempt.size(); ++i) {
    const std::uint64_t least = points.empty() ? 1 : points.back() + 1;
    points.push_back(static_cast<std::uint32_t>(
        fields.number(preempt[i], fmt::format("{}[{}]", path, i), least,
                      std::numeric_limits<std::uint32_t>::max())));
  }
  return points;
}

// A send or disconnect names a client of the check when it had some, and
// none when it had none; a tick never does.
void check_client(Fields &fields, const Step &step, const std::string &path,
                  const std::vector<std::string> &clients) {
  const std::string name = encode_escapes(step.client);
  if (step.kind == Step::Kind::kTick || step.kind == Step::Kind::kCrash) {
    if (!step.client.empty())
      fields.fail(path + ".client", step.kind == Step::Kind::kTick
                                        ? "a tick is no client's step"
                                        : "a crash is no client's "
                                          "step");
  } else if (clients.empty() && !step.client.empty()) {
    fields.fail(path + ".client",
                fmt::format("'{}' is not a client of the check (it had "
                            "none: replay.clients is empty)",
                            name));
  } else if (clients.empty() && step.kind == Step::Kind::kDisconnect) {
    fields.fail(path + ".disconnect", "needs a client, and the check had "
                                      "none (replay.clients is empty)");
  } else if (!clients.empty() && step.client.empty()) {
    fields.fail(path + ".client",
                fmt::format("missing: the check had clients ({})",
                            fmt::join(clients, ", ")));
  } else if (!clients.empty() &&
             std::ranges::find(clients, step.client) == clients.end()) {
    fields.fail(path + ".client",
                fmt::format("'{}' is not one of the check's clients ({})", name,
                            fmt::join(clients, ", ")));
  }
}

Step read_step(Fields &fields, const json &step, const std::string &path,
               ReportPlan &plan) {
  Step value;
  if (!step.is_object()) {
    fields.fail(path, "expected an object: {\"send\": ...}, "
                      "{\"disconnect\": true}, {\"tick\": \"10s\"} or "
                      "{\"crash\": true}");
    return value;
  }
  const auto kinds = std::ranges::count_if(
      std::array{"send", "disconnect", "tick", "crash"},
      [&](const char *kind) { return step.contains(kind); });
  if (kinds != 1) {
    fields.fail(path, "expected exactly one of send, disconnect, tick and "
                      "crash");
    return value;
  }
  if (const json *client = member(step, "client"))
    value.client = fields.bytes(*client, path + ".client");
  if (step.contains("send")) {
    value.message = fields.bytes(step["send"], path + ".send");
  } else if (step.contains("disconnect")) {
    value.kind = Step::Kind::kDisconnect;
    if (step["disconnect"] != true)
      fields.fail(path + ".disconnect", "expected true");
  } else if (step.contains("crash")) {
    value.kind = Step::Kind::kCrash;
    if (step["crash"] != true)
      fields.fail(path + ".crash", "expected true");
  } else {
    value.kind = Step::Kind::kTick;
    read_tick(fields, step["tick"], path + ".tick", plan.target.tick);
  }
  if (const json *preempt = member(step, "preempt"))
    value.preempt_at = read_preemptions(fields, *preempt, path + ".preempt");
  check_client(fields, value, path, plan.target.clients);
  return value;
}

void read_steps(Fields &fields, const json &report, ReportPlan &plan) {
  const json *steps = member(report, "counterexample");
  if (steps == nullptr) {
    fields.fail("counterexample", "none to replay (the check found no "
                                  "violation)");
    return;
  }
  if (!steps->is_array()) {
    fields.fail("counterexample", "expected an array of steps");
    return;
  }
  for (std::size_t i = 0; i < steps->size() && !fields.failed(); ++i)
    plan.steps.push_back(read_step(fields, (*steps)[i],
                                   fmt::format("counterexample[{}]", i), plan));
}

} // namespace

Result<ReportPlan> parse_report(std::string_view text) {
  json report;
  try {
    report = json::parse(text.begin(), text.end());
  } catch (const json::exception &error) {
    // "[json.exception.parse_error.101] parse error at line 1, ..."
    std::string_view what = error.what();
    if (const auto end = what.find("] "); end != std::string_view::npos)
      what.remove_prefix(end + 2);
    return Error{fmt::format("not JSON: {}", what)};
  }
  if (!report.is_object())
    return Error{"not a cmc check --json report (not a JSON object)"};
  Fields fields;
  // A report of an older cmc has no format_version; a newer format may
  // mean something else by a key this cmc reads.
  if (const json *format = member(report, "format_version");
      format != nullptr && *format != kReportFormatVersion)
    fields.fail("format_version",
                fmt::format("{}: this cmc reads reports of format {}",
                            format->dump(), kReportFormatVersion));
  ReportPlan plan;
  if (const json *replay = member(report, "replay"))
    read_target(fields, *replay, plan);
  read_steps(fields, report, plan);
  if (const json *violation = member(report, "violation"))
    plan.expected = fields.bytes(*violation, "violation");
  if (fields.failed())
    return fields.error();
  return plan;
}

} // namespace cmc::app
