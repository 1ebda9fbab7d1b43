#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/site_marks.h"
#include "app/report/report.h"
#include "app/report/step_report.h"
#include "app/report/target_options.h"
#include "app/report/trace_output.h"
#include "tracer/control/target_run.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/syscalls/site_log.h"
#include "tracer/syscalls/syscall_trace.h"

namespace cmc::app {

// Reads one command line; nothing at the end of input.
using ReadLine = std::function<std::optional<std::string>(const char *prompt)>;

// One `cmc explore` session: a live target taking steps one at a time,
// with the debugger's habits (catchpoints on system calls, backtraces,
// the state, going back by replay). Every command prints its answer on
// stdout; a bad command prints one line and changes nothing.
class Explorer {
public:
  // Starts the target; throws UserError when it cannot. trace says how
  // the system calls of a step show.
  Explorer(const TargetOptions &options, const TraceOptions &trace,
           ReadLine read_line);
  Explorer(const Explorer &) = delete;
  Explorer &operator=(const Explorer &) = delete;
  Explorer(Explorer &&) = delete;
  Explorer &operator=(Explorer &&) = delete;
  ~Explorer();

  // Runs one command line; false after quit.
  bool execute(const std::string &line);

  // The command names, for completion.
  [[nodiscard]] static const std::vector<std::string> &commands();

private:
  class Watcher;
  // A step of the path; a tick of any length, not only --tick's.
  struct Step {
    app::Step what;
    std::chrono::nanoseconds tick{};
    std::string tick_text;
  };

  void execute(const std::string &word, const std::string &argument);
  void restart();
  // Takes the step, printing what the target did unless quiet.
  void take(const Step &step, bool quiet);
  // The run cannot go on: says why, and that back or reset starts anew.
  void end_run(const std::string &why);
  // Adds step to the path and takes it.
  void take_next(Step step);
  void send(const std::string &argument);
  // The step of `send TEXT` or, with clients, `send NAME:TEXT`.
  [[nodiscard]] app::Step text_step(const std::string &argument) const;
  // Throws UserError unless name is one of the --client names.
  void require_client(const std::string &name) const;
  void disconnect(const std::string &argument);
  void tick(const std::string &argument);
  // Crashes the target and starts it again (--crash).
  void crash();
  // `preempt N,...`: the next step's preemption points.
  void preempt(const std::string &argument);
  void show_state();
  // The fingerprint check keys the state now by: of the canonical whole
  // process without --region, of the regions' bytes with.
  [[nodiscard]] Result<Fingerprint>
  state_fingerprint(std::span<const std::byte> regions,
                    std::span<const executor::FileDigest> files);
  // Reads the whole process into shown_ when it is the state; false (the
  // run ended) when it cannot.
  [[nodiscard]] bool read_shown();
  // The changes from the state after from steps to the one after to.
  void print_step_changes(std::size_t from, std::size_t to) const;
  // `diff [N [M]]`: what the last step changed, or from the state after
  // N steps to the one after M (the last when not given).
  void show_diff(const std::string &argument) const;
  void show_log() const;
  void add_catch(const std::string &argument);
  void delete_catch(const std::string &argument);
  void show_sites();
  void back();
  void show_path() const;
  // The path's steps as actions of the spec, for the property.
  [[nodiscard]] std::vector<executor::PathStep> actions() const;

  TargetOptions options_;
  std::shared_ptr<tracer::TargetSpec> spec_;
  std::vector<search::RegionLayout> layout_;
  // --invariant, --forbid-response and --property, checked after every
  // step as check does; a violation is reported and the session goes on.
  std::unique_ptr<search::Property> property_;
  // The live run's states after each step ([0] the initial one) and what
  // each client received in each step, for the property.
  std::vector<std::vector<std::byte>> states_;
  std::vector<std::vector<std::string>> received_;
  // With the whole process as the state, the same states by name.
  std::vector<ShownState> shown_;
  tracer::NetworkNamespace netns_;
  TraceOutput trace_out_;
  std::unique_ptr<Watcher> watcher_;
  std::optional<tracer::TargetRun> run_;
  tracer::ProcessCapture capture_; // the whole process, without --region
  std::vector<Step> path_;
  std::vector<tracer::TracedCall> log_; // of the last step
  std::optional<std::vector<Module>> modules_;
  bool ended_ = false; // the target died or exited: only back, reset
  std::vector<std::uint32_t> next_preempt_; // of the next step
};

} // namespace cmc::app
