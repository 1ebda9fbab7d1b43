#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

namespace cmc::testing {

// Paths of the build, found from the test binary's own location.
std::string build_dir();
std::string cmc_binary();
std::string demo(const std::string &name);
std::string target(const std::string &name);

// Whether text holds part.
inline bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}
// How often part occurs in text (occurrences may overlap).
inline std::size_t count_of(const std::string &text, const std::string &part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++count;
  return count;
}
// An example property plugin of demo/properties, built.
std::string plugin(const std::string &name);

struct Outcome {
  int status = -1; // exit status of cmc
  std::string out;
  std::string err;
  // stdout parsed as JSON (for --json -); null if it is not JSON.
  [[nodiscard]] nlohmann::json json() const;
};

// Runs cmc with args and collects its output. The test process is a child
// subreaper, so a target that cmc failed to kill would become our child.
Outcome run_cmc(const std::vector<std::string> &args);
// The same with stdin read from the file input (a path).
Outcome run_cmc_with_input(const std::vector<std::string> &args,
                           const std::string &input);

// The argv of cmc with args, for posix_spawn.
class CmcArgv {
public:
  explicit CmcArgv(const std::vector<std::string> &args);
  CmcArgv(const CmcArgv &) = delete;
  CmcArgv &operator=(const CmcArgv &) = delete;
  [[nodiscard]] const char *program() const { return pointers_[0]; }
  [[nodiscard]] char *const *get() const { return pointers_.data(); }

private:
  std::vector<std::string> strings_;
  std::vector<char *> pointers_; // into strings_, then nullptr
};

// Starts cmc without waiting; finish() collects it.
struct Started {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  // The subcommand ("check") and its --json destination ("-", a file, ""
  // none): finish() keeps the report for the schema check (reports_dir()).
  std::string command;
  std::string json;
};

// Where finish() keeps a copy of every JSON report cmc wrote, one folder
// per subcommand (reports/check/...): the test Reports.MatchTheirSchema
// validates them all against docs/schema once the integration tests ran.
std::string reports_dir();
Started start_cmc(const std::vector<std::string> &args,
                  const std::string &input = "/dev/null");
Outcome finish(const Started &started);

// Live processes whose parent is this test process (leaked targets, once
// cmc has been reaped). Kills and reaps every child, so one leak fails one
// test only.
std::vector<pid_t> reap_leftovers();

// The run directories (cmc-run-*) in the host's /dev/shm and temporary
// directory: cmc keeps them in its sandboxes' own tmpfs, so none is ever
// here, whether cmc ended well or not.
std::vector<std::string> run_directories_on_host();

// How many instructions objdump -d shows in path whose mnemonic (and
// operands) match pattern, a Perl regex ("syscall", "rdtscp?"); -1 when
// objdump fails.
int objdump_count(const std::string &path, const std::string &pattern);

// CMC_RDTSC=patch for the cmc runs of a scope: each rdtsc site patched,
// as where PR_SET_TSC does not trap.
class ForcedPatches {
public:
  ForcedPatches() { setenv("CMC_RDTSC", "patch", 1); }
  ForcedPatches(const ForcedPatches &) = delete;
  ForcedPatches &operator=(const ForcedPatches &) = delete;
  ~ForcedPatches() { unsetenv("CMC_RDTSC"); }
};

// Live children of pid (from /proc/*/stat).
std::vector<pid_t> children_of(pid_t pid);

// Waits, by polling /proc, until a child of parent has spent 50 ms of CPU
// time in user mode (one spinning in a loop; the targets and plugin hosts
// that wait for input spend far less), at most 30 s: its pid, or -1.
pid_t wait_for_spinning_child(pid_t parent);

} // namespace cmc::testing
