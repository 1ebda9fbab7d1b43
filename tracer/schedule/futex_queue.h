#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

// cmc's own futexes. Under cmc's scheduler no thread of the target sleeps
// in the kernel: a futex wait that would sleep holds the thread stopped at
// its entry, queued here, and a futex wake of the thread that runs takes
// the waiters it names from here (as Hermit does). The kernel's futexes
// are then never used by the target, and which thread runs next is cmc's
// choice alone.
namespace cmc::tracer {

// A wait: on the word at address (FUTEX_WAIT's value was there), woken by
// a wake whose bitset shares a bit with this one's (FUTEX_WAIT: every bit).
// The process is the one whose memory address is in: two processes'
// words at one address are two futexes (cmc queues private futexes only).
struct FutexWait {
  pid_t process = 0;
  std::uint64_t address = 0;
  std::uint32_t value = 0;
  std::uint32_t bitset = ~0U;
};

// A wake: up to count waiters on address whose bitset shares a bit with
// this one, the longest waiting first; then, for a requeue, up to
// requeue_count of the rest move to wait on requeue_to.
struct FutexWake {
  pid_t process = 0;
  std::uint64_t address = 0;
  std::uint32_t bitset = ~0U;
  int count = 0;
  std::uint64_t requeue_to = 0;
  int requeue_count = 0;
};

// The threads held in a futex wait, in the order they began waiting.
class FutexQueue {
public:
  struct Entry {
    pid_t tid = 0;
    FutexWait wait;
  };

  void wait(pid_t tid, const FutexWait &wait) {
    entries_.push_back({tid, wait});
  }
  // Takes the waiters wake names out of the queue and returns them, the
  // longest waiting first; moves the requeued ones (counted, not
  // returned) to the end of the queue, waiting on wake.requeue_to.
  struct Woken {
    std::vector<pid_t> woken;
    int requeued = 0;
  };
  [[nodiscard]] Woken wake(const FutexWake &wake);
  // Thread tid waits no more (its wait timed out, or it ended).
  void cancel(pid_t tid);
  [[nodiscard]] const std::vector<Entry> &entries() const { return entries_; }

private:
  std::vector<Entry> entries_;
};

} // namespace cmc::tracer
