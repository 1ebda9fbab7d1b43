#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "app/plugins/plugin_wire.h"
#include "tracer/process/watchdog.h"
#include "tracer/sandbox/sandbox.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::app {

// A process that runs one property plugin for cmc (`cmc plugin-host FILE`,
// app/plugins/plugin_server.h), spoken to over a socket: a plugin that crashes,
// exits or loops takes its host down, not cmc. It leads its own process
// group, so the terminal's Ctrl-C reaches only cmc, whose interrupt() kills
// it like a target (tracer::Watchdog); it exits when cmc's end of the
// socket closes, however cmc ends. One call at a time. Every process the
// plugin starts dies with the call: the host, a child subreaper, kills and
// reaps them all before it replies and before it exits. The host is pid 2
// of a PID namespace of its own (a tracer::Sandbox, whose init is pid 1),
// cmc's child: when the host dies in a call (a crash, a deadline, an
// interrupt), cmc reaps it and ends the namespace, and the kernel kills
// whatever is left in it, setsid or not; when cmc dies, the namespace's
// init exits, to the same effect.
class PluginHost {
public:
  // Starts program (this cmc: /proc/self/exe) as the host of plugin and
  // waits at most limit for its first reply: kLoaded with the property's
  // name, or kRefused with why the plugin cannot be loaded. An error says
  // how the host ended instead ("crashed with SIGBUS").
  static Result<std::unique_ptr<PluginHost>>
  start(const std::string &program, const std::string &plugin,
        std::chrono::milliseconds limit, Reply &loaded);

  PluginHost(const PluginHost &) = delete;
  PluginHost &operator=(const PluginHost &) = delete;
  PluginHost(PluginHost &&) = delete;
  PluginHost &operator=(PluginHost &&) = delete;
  // Kills and reaps the host.
  ~PluginHost();

  // Sends a request (encode_path) and waits for its reply. An error says
  // how the host ended: "crashed with SIGSEGV", "exited with status 3",
  // "did not answer within 10s", "interrupted", "answered garbage"; the
  // host is then dead and reaped.
  Result<Reply> call(std::string_view request);

private:
  PluginHost(pid_t pid, std::unique_ptr<tracer::Sandbox> sandbox,
             UniqueFd socket, std::chrono::milliseconds limit);
  Result<Reply> receive();
  // The host's end once its socket failed: waits for it (it is dying, or
  // the armed deadline kills it) and says how it ended.
  Error ended();
  // Kills the host now and reaps it, with why.
  Error kill_for(const std::string &why);

  pid_t pid_;
  std::unique_ptr<tracer::Sandbox> sandbox_; // ended once the host is reaped
  UniqueFd socket_;
  UniqueFd host_pidfd_; // readable once the host has exited
  std::chrono::milliseconds limit_;
  tracer::Watchdog::Lease lease_;
  bool reaped_ = false;
};

} // namespace cmc::app
