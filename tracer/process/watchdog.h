#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace cmc::tracer {

// Knows every live target of this process. It kills a target whose step
// deadline passes (a hang: the blocked waitpid of its tracer then returns)
// and, on interrupt(), every target at once (Ctrl-C). One per process.
class Watchdog {
public:
  using Clock = std::chrono::steady_clock;

  static Watchdog &instance();

  // While a Lease lives its process group is killed on interrupt() and when
  // an armed deadline passes, and so is each group add()ed.
  class Lease {
  public:
    explicit Lease(pid_t pid);
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    Lease(Lease &&) = delete;
    Lease &operator=(Lease &&) = delete;
    ~Lease();

    // A process of the target that left its process group (setsid): it
    // and the group it leads die with the target.
    void add(pid_t pid) const;
    void arm(Clock::duration timeout) const;
    void disarm() const;
    // True once the deadline passed and the target was killed for it.
    [[nodiscard]] bool expired() const;
    // Stops the clock of an armed deadline until resume(), which gives the
    // step the time it had left: time at a prompt is the user's.
    void pause() const;
    void resume() const;

  private:
    std::uint64_t id_;
  };

  // Kills every target now and from now on; interrupted() turns true.
  void interrupt();
  [[nodiscard]] bool interrupted() const { return interrupted_.load(); }

  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;
  Watchdog(Watchdog &&) = delete;
  Watchdog &operator=(Watchdog &&) = delete;
  ~Watchdog();

private:
  struct Entry {
    std::vector<pid_t> pids; // each a process and the group it leads
    Clock::time_point deadline = Clock::time_point::max();
    bool expired = false;
    std::optional<Clock::duration> paused; // the time left when paused
  };
  Watchdog();
  void watch();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 0;
  Clock::time_point next_wake_ = Clock::time_point::max();
  bool stopping_ = false;
  std::atomic<bool> interrupted_{false};
  std::thread thread_;
};

} // namespace cmc::tracer
