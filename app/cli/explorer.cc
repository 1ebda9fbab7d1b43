#include "app/cli/explorer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/site_listing.h"
#include "app/cli/target_setup.h"
#include "app/report/step_report.h"
#include "decoder/canonical_state.h"
#include "decoder/state_changes.h"
#include "decoder/syscall_scan.h"
#include "tracer/process/watchdog.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/user_error.h"

namespace cmc::app {

// "write" stops at write; "vdso" at calls of patched vDSO functions;
// "inline" at sites outside libc and ld.so; "all" everywhere. Not in the
// anonymous namespace: Explorer::Watcher, a class of a header, keeps them.
struct Catch {
  int id = 0;
  std::string what;
  std::optional<long> number;
};

namespace {

tracer::NetworkNamespace make_netns() {
  auto netns = tracer::NetworkNamespace::create();
  if (!netns)
    cannot_check(netns.error().message);
  return std::move(*netns);
}

// The command word and its argument, blanks around both dropped.
std::pair<std::string, std::string> split_command(const std::string &line) {
  const auto begin = line.find_first_not_of(" \t");
  if (begin == std::string::npos)
    return {"", ""};
  const auto end = line.find_first_of(" \t", begin);
  const std::string word = line.substr(begin, end - begin);
  const auto rest = end == std::string::npos
                        ? std::string::npos
                        : line.find_first_not_of(" \t", end);
  if (rest == std::string::npos)
    return {word, ""};
  // Trailing blanks (a completed word ends in one) are no part of it; a
  // text that ends in one writes it \x20.
  const auto last = line.find_last_not_of(" \t");
  return {word, line.substr(rest, last + 1 - rest)};
}

void print_registers(const tracer::Registers &regs) {
  fmt::print("  rip {:#018x}  rsp {:#018x}  rbp {:#018x}\n", regs.ip(),
             regs.sp(), regs.frame_pointer());
  fmt::print("  orig_rax {} ({})  rax {:#x}\n", regs.syscall_number(),
             decoder::syscall_name(regs.syscall_number()),
             static_cast<std::uint64_t>(regs.result()));
  const auto args = regs.args();
  fmt::print("  rdi {:#x}  rsi {:#x}  rdx {:#x}  r10 {:#x}  r8 {:#x}  r9 "
             "{:#x}\n",
             args[0], args[1], args[2], args[3], args[4], args[5]);
}

void print_frames(const std::vector<executor::Frame> &frames) {
  for (std::size_t i = 0; i < frames.size(); ++i)
    fmt::print("  #{} {}\n", i, executor::describe(frames[i]));
}

void hex_dump(std::span<const std::byte> bytes) {
  for (std::size_t line = 0; line < bytes.size(); line += 16) {
    std::string hex;
    std::string text;
    for (std::size_t i = line; i < std::min(bytes.size(), line + 16); ++i) {
      const auto byte = static_cast<unsigned char>(bytes[i]);
      hex += fmt::format("{:02x} ", byte);
      text += std::isprint(byte) != 0 ? static_cast<char>(byte) : '.';
    }
    fmt::print("  {:04x}  {:48} {}\n", line, hex, text);
  }
}

} // namespace

// Records every call (for log and sites) and stops at the catchpoints,
// where it reads commands until continue or next.
class Explorer::Watcher final : public tracer::SyscallWatcher {
public:
  Watcher(ReadLine read_line,
          std::function<const std::vector<Module> &()> modules,
          decoder::FormatOptions format)
      : read_line_(std::move(read_line)), modules_(std::move(modules)),
        trace_(true, format) {}

  Result<void> entered(const tracer::ProcessAccess &tracee,
                       const tracer::VdsoLayout &vdso,
                       const tracer::Registers &regs) override {
    if (auto placed = sites_.entered(tracee, vdso, regs); !placed)
      return placed;
    if (auto traced = trace_.entered(tracee, vdso, regs); !traced)
      return traced;
    if (!armed_)
      return {};
    const Catch *hit = matching(regs);
    if (hit == nullptr && !stop_next_)
      return {};
    stop_next_ = false;
    stopped_at(tracee, regs, hit);
    return {};
  }
  Result<void> returned(const tracer::ProcessAccess &tracee,
                        const tracer::Registers &regs) override {
    return trace_.returned(tracee, regs);
  }
  [[nodiscard]] bool wants_results() const override { return true; }
  void new_program() override {
    sites_.new_program();
    trace_.new_program();
  }

  // The run whose catchpoints stop the watchdog's time while the user
  // looks (until new_run()).
  void follow(const tracer::Watchdog::Lease &lease) { lease_ = &lease; }
  void follow_none() { lease_ = nullptr; }
  // A new run of the target: the trace starts afresh, the sites stay.
  void new_run() {
    lease_ = nullptr;
    new_program();
    trace_.reset();
    stop_next_ = false;
  }
  void arm(bool armed) { armed_ = armed; }
  tracer::SyscallTrace &trace() { return trace_; }
  const tracer::SiteLog &sites() const { return sites_; }
  std::vector<Catch> &catches() { return catches_; }
  int next_id() { return ++last_id_; }
  // quit was given at a catch: the step ends, then the session.
  [[nodiscard]] bool quit() const { return quit_; }

private:
  const Catch *matching(const tracer::Registers &regs) {
    const tracer::ObservedSite *site = sites_.last();
    for (const Catch &c : catches_) {
      if (c.what == "all" || (c.number && *c.number == regs.syscall_number()))
        return &c;
      if (site != nullptr && c.what == "vdso" && site->path == "[vdso]")
        return &c;
      if (site != nullptr && c.what == "inline" && site->path != "[vdso]") {
        const auto *scanned = scanned_site(modules_(), *site);
        if (scanned == nullptr ||
            scanned->origin == decoder::SiteOrigin::kInline ||
            scanned->origin == decoder::SiteOrigin::kUnknown)
          return &c;
      }
    }
    return nullptr;
  }

  void stopped_at(const tracer::ProcessAccess &tracee,
                  const tracer::Registers &regs, const Catch *hit) {
    const auto call = trace_.pending(tracee);
    fmt::print("caught {} at {:#x}{}\n", call ? call->parts.text() : "?",
               regs.syscall_site(),
               hit != nullptr
                   ? fmt::format(" (catch {}: {})", hit->id, hit->what)
                   : "");
    // The step's time does not run while the user looks.
    if (lease_ != nullptr)
      lease_->pause();
    prompt(call ? call->backtrace : std::vector<executor::Frame>{}, regs);
    if (lease_ != nullptr)
      lease_->resume();
  }

  // Reads commands at a catchpoint until one goes on with the step.
  void prompt(const std::vector<executor::Frame> &backtrace,
              const tracer::Registers &regs) {
    while (true) {
      const auto line = read_line_("(cmc catch) ");
      const std::string word = line ? split_command(*line).first : "continue";
      if (word == "bt") {
        print_frames(backtrace);
      } else if (word == "regs") {
        print_registers(regs);
      } else if (word == "continue" || word == "c") {
        return;
      } else if (word == "next" || word == "n") {
        stop_next_ = true;
        return;
      } else if (word == "quit" || word == "q") {
        quit_ = true;
        catches_.clear();
        return;
      } else if (!word.empty()) {
        fmt::print("stopped at a system call: bt, regs, continue, next, "
                   "quit\n");
      }
    }
  }

  ReadLine read_line_;
  std::function<const std::vector<Module> &()> modules_;
  tracer::SiteLog sites_;
  tracer::SyscallTrace trace_;
  std::vector<Catch> catches_;
  int last_id_ = 0;
  bool armed_ = false;
  // The watchdog's lease of the run followed (follow()).
  const tracer::Watchdog::Lease *lease_ = nullptr;
  bool stop_next_ = false;
  bool quit_ = false;
};

Explorer::Explorer(const TargetOptions &options, const TraceOptions &trace,
                   ReadLine read_line)
    : options_(options), spec_(located_target_spec(options)),
      layout_(layout_of(spec_->regions)),
      property_(make_check_property(options_, spec_, layout_)),
      netns_(make_netns()), trace_out_(trace) {
  spec_->launch.observe = true;
  spec_->launch.netns = netns_.fd();
  // What a state is, as check has it by default.
  spec_->state = spec_->regions.empty() ? executor::StateKind::kProcess
                                        : executor::StateKind::kRegions;
  watcher_ = std::make_unique<Watcher>(
      std::move(read_line),
      [this]() -> const std::vector<Module> & {
        if (!modules_)
          modules_ = scan_modules(spec_->served_program());
        return *modules_;
      },
      trace_out_.format());
  restart();
  fmt::print("started {}: {} system calls until it waited for a client; "
             "'help' lists the commands\n",
             program_name(*spec_), log_.size());
}

Explorer::~Explorer() = default;

const std::vector<std::string> &Explorer::commands() {
  static const std::vector<std::string> names{
      "send", "disconnect", "tick",   "crash", "preempt",  "state", "diff",
      "log",  "catch",      "delete", "sites", "back",     "reset", "path",
      "help", "quit",       "bt",     "regs",  "continue", "next"};
  return names;
}

void Explorer::restart() {
  run_.reset();
  watcher_->new_run();
  watcher_->arm(false);
  bool located = false;
  auto run =
      tracer::TargetRun::start(*spec_, spec_->launch, located, watcher_.get());
  if (!run)
    cannot_check(run.error().message);
  run_.emplace(std::move(*run));
  watcher_->follow(run_->tracee().lease());
  ended_ = false;
  states_.clear();
  received_.clear();
  shown_.clear();
  for (const Step &step : path_)
    take(step, true);
  log_ = watcher_->trace().take();
  watcher_->arm(true);
}

void Explorer::end_run(const std::string &why) {
  // An interrupt killed the target: the session ends (exit 3).
  if (tracer::Watchdog::instance().interrupted())
    cannot_check("interrupted");
  fmt::print("{}; 'back' or 'reset' starts the target again\n", why);
  ended_ = true;
}

void Explorer::take(const Step &step, bool quiet) {
  // The state before a step is the one read after the last: the target
  // stays quiescent in between.
  if (states_.empty()) {
    auto initial = run_->read_state();
    if (!initial)
      return end_run("error: " + initial.error().message);
    states_.push_back(std::move(*initial));
    if (!read_shown())
      return;
  }
  // A crash replaces the target: its lease, which a catch pauses, ends
  // with it.
  if (step.what.kind == app::Step::Kind::kCrash)
    watcher_->follow_none();
  auto fault = step.what.kind == app::Step::Kind::kTick
                   ? run_->tick(step.tick, step.what.preempt_at)
                   : run_->step(action_of(*spec_, step.what));
  if (step.what.kind == app::Step::Kind::kCrash && !run_->tracee().reaped())
    watcher_->follow(run_->tracee().lease());
  log_ = watcher_->trace().take();
  auto received = run_->drain(); // also when quiet: not the next's
  if (!fault)
    return end_run("error: " + fault.error().message);
  if (!quiet) {
    std::vector<tracer::TracedCall> calls = log_;
    for (auto &call : calls)
      call.backtrace.clear();
    print_calls(calls, "  ", trace_out_);
    print_responses(stdout, *spec_, received);
    print_effects(stdout, *spec_, run_->effects(), false);
    if (run_->effects().preemption_points != 0)
      fmt::print("  preemption points: {} ('preempt N' before a step "
                 "switches threads at its N-th)\n",
                 run_->effects().preemption_points);
  }
  if (*fault) {
    (*fault)->step = received_.size();
    return end_run("violated: " + (*fault)->violation());
  }
  auto after = run_->read_state();
  if (!after)
    return end_run("error: " + after.error().message);
  states_.push_back(std::move(*after));
  if (!read_shown())
    return;
  if (!quiet)
    print_step_changes(states_.size() - 2, states_.size() - 1);
  received_.push_back(std::move(received));
  if (quiet)
    return;
  const std::vector<executor::PathStep> path = actions();
  if (auto violation = property_->check_last_step({path, states_, received_}))
    fmt::print("violated: {}\n", *violation);
}

bool Explorer::execute(const std::string &line) {
  const auto [word, argument] = split_command(line);
  if (word.empty())
    return true;
  if (word == "quit" || word == "q")
    return false;
  const bool live = word == "send" || word == "disconnect" || word == "tick" ||
                    word == "crash" || word == "state" || word == "diff";
  if (live && ended_) {
    fmt::print("the target has ended; 'back' or 'reset' starts it again\n");
    return true;
  }
  try {
    execute(word, argument);
  } catch (const UserError &error) {
    if (tracer::Watchdog::instance().interrupted())
      throw;
    fmt::print("error: {}\n", error.what());
  }
  return !watcher_->quit();
}

namespace {

void print_help() {
  fmt::print("send N|TEXT      send message N (1, 2, ... as given with -m) "
             "or TEXT (C escapes)\n"
             "send CLIENT:TEXT with --client: send TEXT as CLIENT (a plain "
             "TEXT is the first client's)\n"
             "disconnect CLIENT  close CLIENT's connection (its next message "
             "connects again)\n"
             "tick [DURATION]  advance the virtual clock (default --tick)\n"
             "crash            with --crash: kill the target, revert its files "
             "to what was durable and start it again\n"
             "preempt N[,N...] the next step switches threads at these of its "
             "preemption points (system calls at which the thread running "
             "stopped while another could run), as check --preemptions\n"
             "state            the state: the regions (hex and ASCII), or the "
             "whole process's live globals, heap chunks and descriptors; and "
             "the state's fingerprint, as check has it (of the whole process "
             "without --region)\n"
             "diff [N [M]]     what the last step changed, or from the state "
             "after N steps to the one after M (default: the last), by name\n"
             "log              the last step's system calls, with backtraces\n"
             "catch [SYSCALL|vdso|inline|all]  stop at matching calls inside "
             "a step (then bt, regs, continue, next); alone: list them\n"
             "delete N         remove catch N\n"
             "sites            the binary's syscall sites, observed or not\n"
             "back, reset      the previous state, the initial state (by "
             "replay)\n"
             "path             the steps so far, as a cmc replay command\n"
             "quit\n");
}

} // namespace

void Explorer::execute(const std::string &word, const std::string &argument) {
  {
    if (word == "send")
      send(argument);
    else if (word == "disconnect")
      disconnect(argument);
    else if (word == "tick")
      tick(argument);
    else if (word == "crash")
      crash();
    else if (word == "preempt")
      preempt(argument);
    else if (word == "state")
      show_state();
    else if (word == "diff")
      show_diff(argument);
    else if (word == "log")
      show_log();
    else if (word == "catch")
      add_catch(argument);
    else if (word == "delete")
      delete_catch(argument);
    else if (word == "sites")
      show_sites();
    else if (word == "back")
      back();
    else if (word == "reset")
      path_.clear(), restart();
    else if (word == "path")
      show_path();
    else if (word == "help")
      print_help();
    else
      fmt::print("unknown command '{}'; 'help' lists them\n", word);
  }
}

void Explorer::take_next(Step step) {
  step.what.preempt_at = std::exchange(next_preempt_, {});
  path_.push_back(std::move(step));
  fmt::print("step {}: {}\n", path_.size(),
             step_text(path_.back().what, path_.back().tick_text));
  take(path_.back(), false);
}

void Explorer::preempt(const std::string &argument) {
  auto points = parse_preemption_points(argument);
  if (!points)
    usage(points.error().message);
  next_preempt_ = std::move(*points);
  fmt::print("the next step switches threads at preemption point(s) {}\n",
             fmt::join(next_preempt_, ", "));
}

void Explorer::send(const std::string &argument) {
  if (argument.empty()) {
    fmt::print("send what? a message number (1-{}) or a text\n",
               options_.messages.size());
    return;
  }
  if (argument.find_first_not_of("0123456789") != std::string::npos) {
    take_next({text_step(argument), {}, ""});
    return;
  }
  std::size_t number = 0;
  std::from_chars(argument.data(), argument.data() + argument.size(), number);
  if (number == 0 || number > options_.messages.size()) {
    fmt::print("there is no message {}\n", argument);
    return;
  }
  take_next(
      {step_of(*spec_, static_cast<executor::ActionId>(number - 1)), {}, ""});
}

app::Step Explorer::text_step(const std::string &argument) const {
  if (spec_->clients.empty())
    return {app::Step::Kind::kSend, "", decode_messages({argument}).front()};
  // A text whose part before its first colon is a word names a client; a
  // literal colon of the first client's is sent as FIRST:TEXT or \x3a.
  const auto colon = argument.find(':');
  const std::string name = argument.substr(0, colon);
  if (colon == std::string::npos || name.empty() ||
      name.find_first_of(" \t\\") != std::string::npos)
    return {app::Step::Kind::kSend, spec_->clients.front(),
            decode_messages({argument}).front()};
  require_client(name);
  const std::string text =
      decode_messages({argument.substr(colon + 1)}).front();
  if (text.empty())
    usage(fmt::format("send {}: what? give a text after the colon", name));
  return {app::Step::Kind::kSend, name, text};
}

void Explorer::require_client(const std::string &name) const {
  const auto &clients = spec_->clients;
  if (std::find(clients.begin(), clients.end(), name) == clients.end())
    usage(fmt::format("unknown client '{}' (the clients are {})", name,
                      fmt::join(clients, ", ")));
}

void Explorer::disconnect(const std::string &argument) {
  if (spec_->clients.empty()) {
    fmt::print("disconnect needs named clients: start explore with "
               "--client NAME -m ...\n");
    return;
  }
  if (argument.empty()) {
    fmt::print("disconnect which client? {}\n",
               fmt::join(spec_->clients, ", "));
    return;
  }
  require_client(argument);
  take_next({{app::Step::Kind::kDisconnect, argument, ""}, {}, ""});
}

void Explorer::crash() {
  if (!spec_->crash) {
    fmt::print("crash needs --crash: start explore with it\n");
    return;
  }
  take_next({{app::Step::Kind::kCrash, "", ""}, {}, ""});
}

void Explorer::tick(const std::string &argument) {
  const std::string text = argument.empty() ? options_.tick : argument;
  if (text.empty()) {
    fmt::print("tick how long? e.g. tick 10s (or start with --tick)\n");
    return;
  }
  auto duration = parse_duration(text);
  if (!duration) {
    fmt::print("bad duration: {}\n", duration.error().message);
    return;
  }
  take_next({{app::Step::Kind::kTick, "", ""},
             *duration,
             format_duration(*duration)});
}

Result<Fingerprint>
Explorer::state_fingerprint(std::span<const std::byte> regions,
                            std::span<const executor::FileDigest> files) {
  if (spec_->state == executor::StateKind::kRegions)
    return run_->fingerprint(regions, files);
  auto image = run_->read_process(capture_);
  if (!image)
    return image.error();
  return run_->process_fingerprint(
      decoder::canonicalize(*image, {}).fingerprint, files);
}

void Explorer::show_state() {
  auto state = run_->read_state();
  if (!state) {
    fmt::print("error: {}\n", state.error().message);
    return;
  }
  if (!shown_.empty()) {
    const ShownState &now = shown_.back();
    for (const std::string &line : decoder::describe_state(now.process))
      fmt::print("  {}\n", line);
    for (const executor::FileDigest &file : now.files)
      fmt::print("file {} (hash {:016x})\n", file.name, file.hash);
    // As check hashes a whole-process state (ProcessExecutor::observe).
    fmt::print(
        "fingerprint {} of the whole process after {} step{}\n",
        run_->process_fingerprint(now.process.fingerprint, now.files).hex(),
        path_.size(), path_.size() == 1 ? "" : "s");
    return;
  }
  for (const search::RegionLayout &region : layout_) {
    fmt::print("{} ({} bytes):\n", region.name, region.length);
    hex_dump(std::span(*state).subspan(region.offset, region.length));
  }
  auto files = run_->read_files();
  if (!files) {
    fmt::print("error: {}\n", files.error().message);
    return;
  }
  for (const executor::FileDigest &file : *files)
    fmt::print("file {} (hash {:016x})\n", file.name, file.hash);
  auto fingerprint = state_fingerprint(*state, *files);
  if (!fingerprint) {
    fmt::print("error: {}\n", fingerprint.error().message);
    return;
  }
  fmt::print("fingerprint {} of {} after {} step{}\n", fingerprint->hex(),
             spec_->state == executor::StateKind::kRegions
                 ? "the regions"
                 : "the whole process",
             path_.size(), path_.size() == 1 ? "" : "s");
}

bool Explorer::read_shown() {
  if (!whole_process(*spec_))
    return true;
  auto now = read_named_state(*spec_, *run_, capture_);
  if (!now) {
    end_run("error: " + now.error().message);
    return false;
  }
  shown_.push_back(std::move(*now));
  return true;
}

void Explorer::print_step_changes(std::size_t from, std::size_t to) const {
  if (whole_process(*spec_))
    print_state_changes(stdout, state_changes(shown_.at(from), shown_.at(to)));
  else
    print_changes(stdout,
                  changes_of(layout_, states_.at(from), states_.at(to)));
}

void Explorer::show_diff(const std::string &argument) const {
  std::istringstream words(argument);
  std::vector<std::size_t> steps;
  std::string word;
  while (words >> word) {
    std::size_t number = 0;
    const auto [end, failed] =
        std::from_chars(word.data(), word.data() + word.size(), number);
    if (failed != std::errc() || end != word.data() + word.size() ||
        number >= states_.size())
      usage(fmt::format("diff takes step numbers from 0 to {}: '{}'",
                        states_.size() - 1, word));
    steps.push_back(number);
  }
  if (steps.size() > 2)
    usage("diff takes at most two step numbers");
  if (steps.empty() && states_.size() < 2) {
    fmt::print("no step taken yet\n");
    return;
  }
  const std::size_t last = states_.size() - 1;
  const std::size_t from = steps.empty() ? last - 1 : steps[0];
  const std::size_t to = steps.size() < 2 ? last : steps[1];
  fmt::print("from the state after {} step{} to the one after {}:\n", from,
             from == 1 ? "" : "s", to);
  print_step_changes(from, to);
}

void Explorer::show_log() const {
  print_calls(log_, "  ", trace_out_);
  if (const auto waiting = watcher_->trace().pending(run_->tracee());
      waiting && !ended_ && trace_out_.shows(*waiting))
    fmt::print("  waiting in: {}\n", waiting->parts.text());
}

void Explorer::add_catch(const std::string &argument) {
  auto &catches = watcher_->catches();
  if (argument.empty()) {
    for (const Catch &c : catches)
      fmt::print("  {}: {}\n", c.id, c.what);
    if (catches.empty())
      fmt::print("no catches\n");
    return;
  }
  Catch c{0, argument, decoder::syscall_number(argument)};
  if (!c.number && argument != "vdso" && argument != "inline" &&
      argument != "all") {
    fmt::print("catch what? a system call name, vdso, inline or all\n");
    return;
  }
  c.id = watcher_->next_id();
  catches.push_back(c);
  fmt::print("catch {}: {}\n", c.id, c.what);
}

void Explorer::delete_catch(const std::string &argument) {
  auto &catches = watcher_->catches();
  const auto before = catches.size();
  std::erase_if(catches, [&](const Catch &c) {
    return std::to_string(c.id) == argument;
  });
  if (catches.size() < before)
    fmt::print("deleted catch {}\n", argument);
  else
    fmt::print("there is no catch {}\n", argument);
}

void Explorer::show_sites() {
  if (!modules_)
    modules_ = scan_modules(spec_->served_program());
  const SiteMarks marks = mark_sites(*modules_, watcher_->sites().sites());
  print_sites(*modules_, false, &marks);
  print_calls_seen(marks);
}

void Explorer::back() {
  if (path_.empty()) {
    fmt::print("already at the initial state\n");
    return;
  }
  path_.pop_back();
  restart();
  fmt::print("back at step {} (replayed)\n", path_.size());
}

std::vector<executor::PathStep> Explorer::actions() const {
  std::vector<executor::PathStep> actions;
  for (const Step &step : path_)
    actions.push_back(action_of(*spec_, step.what));
  return actions;
}

void Explorer::show_path() const {
  TargetOptions target = options_;
  std::vector<app::Step> steps;
  for (const Step &step : path_) {
    steps.push_back(step.what);
    if (step.what.kind == app::Step::Kind::kTick)
      target.tick = step.tick_text; // replay takes one tick length
  }
  fmt::print("{}\n", replay_command_line(target, steps));
}

} // namespace cmc::app
