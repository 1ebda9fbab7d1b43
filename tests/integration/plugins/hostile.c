/* Property plugins that misbehave, one per HOSTILE_* mode (built once per
 * mode by the test build): each must end cmc's check with one line, exit
 * 3, nothing left behind.
 *   segfault  writes through a null pointer
 *   abort     calls abort()
 *   exit      calls exit(3)
 *   overrun   writes 64 bytes past the end of its violation buffer
 *   loop      never returns
 *   garbage   writes bytes of its own to the host's socket (fd 3)
 *   load      crashes while it is loaded (a constructor)
 *   noisy     prints to stdout and holds: cmc's output stays its own
 *   fork      starts two processes and holds: a child, and a grandchild
 *             that leaves the child and its process group (setsid), both
 *             waiting forever; it appends their pids (in its host's PID
 *             namespace) to the file named by $CMC_TEST_PID_FILE. They
 *             must die with the call.
 *   forkloop  the same, then never returns: they must die with cmc.
 *   forkcrash the same, then aborts: they must die with its host.
 * Each misbehaves from its first call on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>

#include <cmc/property.h>

#if defined(HOSTILE_LOAD) || defined(HOSTILE_SEGFAULT)
/* Through a volatile pointer: GCC drops a constant null store, and with it
 * a constructor. */
static int *volatile nowhere;
#endif

#ifdef HOSTILE_LOAD
__attribute__((constructor)) static void crash_on_load(void) { *nowhere = 1; }
#endif

#if defined(HOSTILE_FORK) || defined(HOSTILE_FORKLOOP) ||                      \
    defined(HOSTILE_FORKCRASH)
/* The pids of a child and a grandchild it started, appended to the file
 * $CMC_TEST_PID_FILE names, one a line, once both are running. */
static int start_two(void) {
  int ready[2];
  if (pipe(ready) != 0)
    return 1;
  if (fork() == 0) {
    if (fork() == 0) {
      setsid();
      pid_t self = getpid();
      if (write(ready[1], &self, sizeof self) != sizeof self)
        _exit(1);
      pause();
      _exit(0);
    }
    pid_t self = getpid();
    if (write(ready[1], &self, sizeof self) != sizeof self)
      _exit(1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  pid_t pids[2];
  if (read(ready[0], &pids[0], sizeof pids[0]) != sizeof pids[0] ||
      read(ready[0], &pids[1], sizeof pids[1]) != sizeof pids[1])
    return 1;
  close(ready[0]);
  const char *file = getenv("CMC_TEST_PID_FILE");
  if (file == NULL)
    return 1;
  int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  char line[32];
  for (int i = 0; i < 2; ++i) {
    int length = snprintf(line, sizeof line, "%d\n", (int)pids[i]);
    if (fd < 0 || write(fd, line, (size_t)length) != length)
      return 1;
  }
  close(fd);
  return 0;
}
#endif

static int misbehave(const struct cmc_path *path, char *violation,
                     size_t size) {
  (void)path;
  if (size > 0)
    violation[0] = '\0';
#if defined(HOSTILE_SEGFAULT)
  *nowhere = 1;
#elif defined(HOSTILE_ABORT)
  abort();
#elif defined(HOSTILE_EXIT)
  exit(3);
#elif defined(HOSTILE_OVERRUN)
  memset(violation, 'x', size + 64);
#elif defined(HOSTILE_LOOP)
  for (volatile int spin = 0;; ++spin) {
  }
#elif defined(HOSTILE_GARBAGE)
  static const char kGarbage[] = "this is no reply of a plugin host";
  if (write(3, kGarbage, sizeof kGarbage) < 0)
    return 1;
#elif defined(HOSTILE_FORK)
  if (start_two() != 0) {
    snprintf(violation, size, "could not start its processes");
    return 1;
  }
#elif defined(HOSTILE_FORKLOOP)
  start_two();
  for (volatile int spin = 0;; ++spin) {
  }
#elif defined(HOSTILE_FORKCRASH)
  start_two();
  abort();
#elif defined(HOSTILE_NOISY)
  printf("{\"not\": \"cmc's report\"}\n");
  fflush(stdout);
#endif
  return 0;
}

CMC_PROPERTY("hostile", misbehave);
