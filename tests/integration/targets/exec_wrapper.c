#define _GNU_SOURCE
/* exec_wrapper [--again N] PROGRAM [ARGS...]: a wrapper as env, setpriv or
 * sh -c 'exec ...' are, for cmc's tests of following one: it does a little
 * of its own first (reads the clock, the time stamp counter and random
 * bytes, which cmc answers in it as in any program), then execs PROGRAM
 * with ARGS in its place. With --again N it first execs itself N more
 * times (through /proc/self/exe), each time with N one less.
 *
 * Its own globals are no server's: wrapper_state is where a program's
 * cmc_state is not, so regions read at the wrapper's addresses are wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

unsigned char wrapper_state[64];

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: exec_wrapper [--again N] PROGRAM [ARGS...]\n", stderr);
    return 2;
  }
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const unsigned long long counter = __rdtsc();
  if (getrandom(wrapper_state, 16, 0) != 16)
    return 1;
  wrapper_state[16] = (unsigned char)(now.tv_nsec ^ (long)counter);
  if (strcmp(argv[1], "--again") == 0 && argc >= 4) {
    const int again = atoi(argv[2]);
    if (again > 0) {
      char fewer[16];
      snprintf(fewer, sizeof fewer, "%d", again - 1);
      argv[2] = fewer;
      execv("/proc/self/exe", argv);
      perror("exec_wrapper: /proc/self/exe");
      return 1;
    }
    argv += 2;
  }
  execv(argv[1], argv + 1);
  perror("exec_wrapper: exec");
  return 1;
}
