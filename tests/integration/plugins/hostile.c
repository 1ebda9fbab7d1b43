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
 * Each misbehaves from its first call on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmc/property.h>

/* Through a volatile pointer: GCC drops a constant null store, and with it
 * a constructor. */
static int *volatile nowhere;

#ifdef HOSTILE_LOAD
__attribute__((constructor)) static void crash_on_load(void) { *nowhere = 1; }
#endif

static int misbehave(const struct cmc_path *path, char *violation,
                     size_t size) {
  (void)path;
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
#elif defined(HOSTILE_NOISY)
  printf("{\"not\": \"cmc's report\"}\n");
  fflush(stdout);
#endif
  (void)violation;
  (void)size;
  return 0;
}

CMC_PROPERTY("hostile", misbehave);
