#include "tracer/schedule/futex_queue.h"

#include <algorithm>

namespace cmc::tracer {

FutexQueue::Woken FutexQueue::wake(const FutexWake &wake) {
  Woken result;
  std::vector<Entry> kept;
  std::vector<Entry> requeued;
  for (Entry &entry : entries_) {
    const bool named = entry.wait.process == wake.process &&
                       entry.wait.address == wake.address &&
                       (entry.wait.bitset & wake.bitset) != 0;
    if (named && std::ssize(result.woken) < wake.count) {
      result.woken.push_back(entry.tid);
    } else if (named && result.requeued < wake.requeue_count) {
      entry.wait.address = wake.requeue_to;
      requeued.push_back(entry);
      ++result.requeued;
    } else {
      kept.push_back(entry);
    }
  }
  kept.insert(kept.end(), requeued.begin(), requeued.end());
  entries_ = std::move(kept);
  return result;
}

void FutexQueue::cancel(pid_t tid) {
  std::erase_if(entries_,
                [tid](const Entry &entry) { return entry.tid == tid; });
}

} // namespace cmc::tracer
