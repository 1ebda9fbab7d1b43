#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "executor/executor.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// What cmc keeps of what a target wrote to its stdout and stderr: the
// first and the last kKept bytes, and how many it wrote in all.
struct TargetOutput {
  static constexpr std::size_t kKept = executor::kOutputKept;

  std::string head; // the first bytes, up to kKept
  std::string tail; // the last bytes after head, up to kKept
  std::uint64_t written = 0;

  void append(const char *bytes, std::size_t count);
  // The bytes written between head and tail, which cmc did not keep.
  [[nodiscard]] std::uint64_t dropped() const {
    return written - head.size() - tail.size();
  }
  // The last bytes kept, as many as are contiguous: all of them when
  // none were dropped, else tail.
  [[nodiscard]] std::string end() const {
    return dropped() == 0 ? head + tail : tail;
  }
  friend bool operator==(const TargetOutput &, const TargetOutput &) = default;
};

// Reads every live target's output pipe as the target writes to it, on a
// thread of its own that waits in epoll on all of them: a pipe holds 1 MiB
// at most, and a target blocked in a write to a full one never becomes
// quiescent (it would be reported as a hang). The tracers' threads only
// meet it when they register, take or put back a target's output. One per
// process, never destroyed.
class OutputDrain {
public:
  static OutputDrain &instance();

  // Reads pipe (non-blocking, the read end of the target's stdout and
  // stderr) into output until the Registration ends.
  class Registration {
  public:
    explicit Registration(UniqueFd pipe);
    Registration(const Registration &) = delete;
    Registration &operator=(const Registration &) = delete;
    Registration(Registration &&) = delete;
    Registration &operator=(Registration &&) = delete;
    // Stops reading and closes the pipe.
    ~Registration();

    // What the target wrote so far, every byte in the pipe read first.
    [[nodiscard]] TargetOutput output() const;
    // Puts back output taken earlier (a restored snapshot's).
    void restore(TargetOutput output) const;

  private:
    std::uint64_t id_;
  };

  OutputDrain(const OutputDrain &) = delete;
  OutputDrain &operator=(const OutputDrain &) = delete;
  OutputDrain(OutputDrain &&) = delete;
  OutputDrain &operator=(OutputDrain &&) = delete;
  ~OutputDrain() = delete;

private:
  struct Entry {
    UniqueFd pipe;
    TargetOutput output;
  };
  OutputDrain();
  void drain_all();
  // Reads what entry's pipe holds; mutex_ held.
  static void drain(Entry &entry);

  UniqueFd epoll_;
  std::mutex mutex_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 0;
};

} // namespace cmc::tracer
