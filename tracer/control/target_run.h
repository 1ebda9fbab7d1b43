#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoder/region.h"
#include "executor/executor.h"
#include "tracer/capture/process_capture.h"
#include "tracer/control/session.h"
#include "tracer/net/connection.h"
#include "tracer/net/target_socket.h"
#include "tracer/process/tracee.h"

namespace cmc::tracer {

// What a run of the target starts and reads.
struct TargetSpec {
  LaunchSpec launch;
  // The program that serves: the one the target runs when it first waits
  // for a client, launch.program or what a wrapper exec'd in its place
  // (env, sh -c 'exec ...', setpriv; TargetRun::serving_program). Empty:
  // launch.program. The regions, load_base and entry are its.
  std::string program;
  // Regions at their link-time addresses; the load bias is added per run.
  std::vector<decoder::Region> regions;
  std::uint64_t load_base = 0; // decoder::ElfFile::load_base
  std::uint64_t entry = 0;     // decoder::ElfFile::entry

  [[nodiscard]] const std::string &served_program() const {
    return program.empty() ? launch.program : program;
  }
  // The alphabet: ActionId i < messages.size() sends messages[i] on the
  // connection of client client_of[i]; with disconnect, the next
  // client_count() actions close each client's connection; with a tick,
  // the next action advances the virtual clock by *tick; with crash, the
  // last one crashes the target and starts it again (crash()).
  std::vector<std::string> messages;
  // Several clients, by name, each connecting at its first message (and
  // again at its first after a disconnect). Empty: one client, connected
  // before the first step.
  std::vector<std::string> clients;
  std::vector<std::size_t> client_of; // per message; empty: all client 0
  bool disconnect = false;
  std::optional<std::chrono::nanoseconds> tick;
  bool crash = false; // --crash; launch.durable goes with it

  [[nodiscard]] std::size_t client_count() const {
    return clients.empty() ? 1 : clients.size();
  }
  [[nodiscard]] std::size_t client_of_message(std::size_t message) const {
    return client_of.empty() ? 0 : client_of.at(message);
  }
  // The first disconnect action (when disconnect), and the tick's.
  [[nodiscard]] executor::ActionId first_disconnect() const {
    return static_cast<executor::ActionId>(messages.size());
  }
  [[nodiscard]] executor::ActionId tick_action() const {
    return static_cast<executor::ActionId>(messages.size() +
                                           (disconnect ? client_count() : 0));
  }
  [[nodiscard]] executor::ActionId crash_action() const {
    return static_cast<executor::ActionId>(tick_action() + (tick ? 1 : 0));
  }
  [[nodiscard]] std::size_t alphabet_size() const {
    return crash_action() + (crash ? 1 : 0);
  }
  std::uint64_t seed = 0; // seeds getrandom, /dev/urandom and AT_RANDOM
  std::optional<std::uint16_t> port; // connect here instead of asking listen
  std::chrono::milliseconds step_timeout{10000};
  // What a state is; with kRegions and audit, the whole process is read
  // too, for Observation::process_after.
  executor::StateKind state = executor::StateKind::kProcess;
  bool audit = false;
  // Each worker keeps one live target and the states it reached
  // (Snapshot), up to snapshot_memory bytes, and takes a path from the
  // longest prefix it kept instead of replaying it (--mode snapshot).
  bool snapshots = false;
  std::size_t snapshot_memory = std::size_t{256} << 20;
};

// Where the regions are in one run of the target.
struct StateReader {
  std::vector<iovec> remote;
  std::size_t total = 0;

  [[nodiscard]] Result<std::vector<std::byte>> read(const Tracee &t) const;
};

// One run of the target: started under the tracer, connected and in its
// initial state, then taking steps one at a time.
class TargetRun {
public:
  // Launches per launch (spec.launch, joined to a worker's network
  // namespace). located: whether an earlier run of this worker checked the
  // load bias against /proc/PID/maps (then the auxiliary vector suffices);
  // set by the first run. A watcher sees the run's system calls from the
  // start on (all of them with launch.observe).
  [[nodiscard]] static Result<TargetRun>
  start(const TargetSpec &spec, const LaunchSpec &launch, bool &located,
        SyscallWatcher *watcher = nullptr);
  // The program the target runs once it first waits for a client (see
  // TargetSpec::program), as its /proc/PID/exe names it: one start-up, in
  // a network namespace of its own, its output not shown; an Error as
  // start() would give when it does not get there.
  [[nodiscard]] static Result<std::string>
  serving_program(const TargetSpec &spec);

  // The region bytes now.
  [[nodiscard]] Result<std::vector<std::byte>> read_state() const {
    return reader_.read(*tracee_);
  }
  // The whole first process now (ProcessCapture::capture).
  [[nodiscard]] Result<decoder::ProcessImage>
  read_process(ProcessCapture &capture) const;
  // Every process of the target's now, in order of creation (the first
  // first).
  [[nodiscard]] Result<std::vector<decoder::ProcessImage>>
  read_processes(ProcessCapture &capture);
  // The files the target may write, now (RunFiles::digest).
  [[nodiscard]] Result<std::vector<executor::FileDigest>> read_files() const {
    return tracee_->files().digest();
  }
  // The fingerprint of a state read now: its bytes (the region bytes, or
  // the fingerprint of the canonical whole process), its files and the
  // session's hidden state (the virtual clock, deadlines, which clients
  // are connected, the bytes they sent that the target has not read).
  [[nodiscard]] Fingerprint
  fingerprint(std::span<const std::byte> state,
              std::span<const executor::FileDigest> files) const;
  // The same for a whole-process state: process is the fingerprint of the
  // canonical whole process read now (decoder::canonicalize).
  [[nodiscard]] Fingerprint
  process_fingerprint(const Fingerprint &process,
                      std::span<const executor::FileDigest> files) const {
    return fingerprint(std::as_bytes(std::span(&process, 1)), files);
  }
  // Sends a message, ticks the clock or crashes the target, then runs the
  // target until it is quiescent, switching threads at the step's
  // preemption points; the Fault (step unset) if it died, exited or hung.
  [[nodiscard]] Result<std::optional<executor::Fault>>
  step(const executor::PathStep &step);
  // After a read of the target found it gone (an Error of kind
  // kTargetGone) while it was stopped (once a step ended, or at start):
  // how it ended, as step() would have returned it.
  [[nodiscard]] Result<std::optional<executor::Fault>> gone();
  // A tick of any length (the alphabet's is spec.tick), then runs the
  // target until it is quiescent, switching threads at preempt_at.
  [[nodiscard]] Result<std::optional<executor::Fault>>
  tick(std::chrono::nanoseconds by,
       std::span<const std::uint32_t> preempt_at = {});
  // What the target sent back since the last drain, by client.
  [[nodiscard]] std::vector<std::string> drain();
  // What the last step did to the connections: how much of its message
  // the target read, the connections it closed.
  [[nodiscard]] const executor::StepEffects &effects() const {
    return effects_;
  }
  // Whether the target closed client's connection (its next message
  // connects again).
  [[nodiscard]] bool closed_by_server(std::size_t client) const {
    return closed_by_server_.at(client);
  }

  // How long a step may take (TargetSpec::step_timeout).
  [[nodiscard]] std::chrono::milliseconds step_timeout() const {
    return spec_->step_timeout;
  }
  [[nodiscard]] Tracee &tracee() { return *tracee_; }
  [[nodiscard]] const Tracee &tracee() const { return *tracee_; }
  [[nodiscard]] const Session &session() const { return *session_; }
  [[nodiscard]] Session &session() { return *session_; }
  // cmc's side of the clients as values, for a snapshot: the port of
  // cmc's end of each client's open connection, the clients whose
  // connection the target closed, the connections the path opened.
  struct Clients {
    std::vector<std::optional<std::uint16_t>> ports;
    std::vector<bool> closed_by_server;
    std::size_t opened = 0;
  };
  [[nodiscard]] Clients clients() const;
  // The target's end of client's open connection: its descriptor number
  // and a duplicate (see TargetSocket); nothing when it has none.
  struct TargetEnd {
    int fd = -1;
    UniqueFd socket;
  };
  [[nodiscard]] std::optional<TargetEnd> target_end(std::size_t client);
  // Resets cmc's end of client's open connection and forgets it; the
  // target's end is left to the caller.
  void drop_connection(std::size_t client);
  // Connects client from port (nth_client_port; a snapshot's: the port
  // it had when saved); the target has not accepted it yet.
  [[nodiscard]] Result<void> connect_from(std::size_t client,
                                          std::uint16_t port);
  // Puts back the values of saved but the open connections, which the
  // caller makes those of saved (drop_connection, connect_from). The
  // disconnected ones are reset: the target has no end of them (else
  // its descriptors differ from the saved ones).
  void restore_clients(const Clients &saved);
  // The connections open now, and whether each is idle: accepted, and
  // nothing the target has not read or cmc has not acknowledged queued.
  [[nodiscard]] std::size_t open_connections() const;
  [[nodiscard]] bool connections_idle();

private:
  TargetRun(const TargetSpec &spec, std::unique_ptr<Tracee> tracee);
  // What a capture of the process whose threads these are needs.
  [[nodiscard]] CaptureContext
  capture_context(std::vector<ThreadRegisters> threads) const;
  // Launches the target under the tracer and runs it until it first waits
  // for a client, following the execs of a wrapper on the way.
  [[nodiscard]] static Result<TargetRun> until_serving(const TargetSpec &spec,
                                                       const LaunchSpec &launch,
                                                       SyscallWatcher *watcher);
  // Runs the target to quiescence (starting: until it serves, see
  // Session::run_until_serving); a fault means it cannot be checked.
  [[nodiscard]] Result<void> settle(const char *when, bool starting = false);
  // Runs the target until it is quiescent after a step was given, then
  // until what it wrote has reached cmc.
  [[nodiscard]] Result<std::optional<executor::Fault>> run_step();
  // Moves the virtual clock on by, then run_step().
  [[nodiscard]] Result<std::optional<executor::Fault>>
  advance(std::chrono::nanoseconds by);
  // The crash step: kills every process of the target (Tracee::crash),
  // puts its files back to what was durable (DurableFiles::restore), and
  // starts the same command again on them, until it serves. Every client's
  // connection ends with the target; its next message connects again. A
  // target that cannot start again faults.
  [[nodiscard]] Result<std::optional<executor::Fault>> crash();
  // The restarted target after a crash, in a new session, until it serves.
  [[nodiscard]] Result<std::optional<executor::Fault>> restart();
  // Adds the last line the target wrote to the fault (without
  // show_output).
  void add_last_output(executor::Fault &fault);
  // Waits until everything the target wrote to each client has reached
  // cmc, and notes the connections it closed and the bytes it left unread.
  [[nodiscard]] Result<void> collect_replies();
  [[nodiscard]] Result<void>
  collect_from(std::size_t client, std::chrono::steady_clock::time_point end);
  // How many bytes of the message just sent to client the target read,
  // when collect_from() found no end of the target's to ask: all of them
  // if it closed the connection in order, none if it has no end of it.
  void count_closed_read(std::size_t client);

  const TargetSpec *spec_;
  LaunchSpec launch_; // as start() was given it, for a restart
  SyscallWatcher *watcher_ = nullptr;
  std::unique_ptr<Tracee> tracee_;
  std::unique_ptr<Session> session_;
  // Opens client's connection if it has none, and runs the target until it
  // is quiescent again (it accepts).
  [[nodiscard]] Result<std::optional<executor::Fault>>
  connect(std::size_t client);
  [[nodiscard]] Result<void> open_connection(std::size_t client);
  // Moves client's connection to closed_.
  void end_connection(std::size_t client);

  sockaddr_storage address_{};
  int netns_ = -1;
  std::vector<std::optional<Connection>> connections_; // one per client
  // The target's end of each client's connection, while it is open.
  std::vector<std::optional<TargetSocket>> ends_;
  std::vector<bool> closed_by_server_;
  // By client, the bytes it sent that the target had not read when the
  // last step ended (fingerprint()).
  std::vector<std::string> unread_;
  // Received on connections that ended since the last drain, by client.
  std::vector<std::string> received_;
  executor::StepEffects effects_;
  // The client the step in flight sent its message to: collect_from()
  // counts what the target read of it on the end it already duplicated.
  std::optional<std::size_t> sent_to_;
  std::vector<Connection> closed_; // disconnected, reset at the end
  // By connection of closed_, the same: a client that disconnected leaves
  // what the target has not read of it in the target's end, before the
  // end of file it reads next.
  std::vector<std::string> left_unread_;
  std::size_t opened_ = 0; // connections opened so far
  StateReader reader_;
};

} // namespace cmc::tracer
