/* fork_loop: the floor of a fork snapshot, untraced. For each request (a
 * 4-byte count n on stdin) it forks n children that exit at once, reaps
 * each, and answers with the nanoseconds that took and the minor page
 * faults of those children (two int64_t on stdout).
 * Dynamically linked against libc alone, like demo kv, so its fork copies
 * about as many page tables. */
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The minor faults of the children reaped so far. */
static int64_t children_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_minflt;
}

static int64_t now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int main(void) {
  uint32_t n;
  while (read(0, &n, sizeof n) == sizeof n) {
    const int64_t faults = children_faults();
    const int64_t start = now_ns();
    for (uint32_t i = 0; i < n; ++i) {
      const pid_t child = fork();
      if (child == 0)
        _exit(0);
      if (child < 0 || waitpid(child, NULL, 0) != child)
        return 1;
    }
    const int64_t answer[2] = {now_ns() - start, children_faults() - faults};
    if (write(1, answer, sizeof answer) != sizeof answer)
      return 1;
  }
  return 0;
}
