#define _GNU_SOURCE
/* tsc_lease PORT [LIBRARY]: a one-connection line server that times a lease
 * with the time stamp counter (rdtsc, rdtscp), as servers that want a cheap
 * clock do, for cmc's tests of its control of rdtsc.
 *
 * "TAKE\n" takes the lease (cmc_state[0] = 1) and notes rdtsc. "RENEW\n"
 * renews it, unless more than 5e9 counts of rdtscp have passed since: then
 * the lease is over and the holder loses it (cmc_state[0] = 0, the bug an
 * invariant sticky finds) and the reply is "EXPIRED\n". Under cmc the
 * counter is its virtual clock at the host's TSC frequency (at least
 * 1 GHz): only a tick (of more than 5 s at 1 GHz) between TAKE and RENEW
 * can expire the lease. Run on the real counter, steps a few milliseconds
 * apart never do.
 *
 * With LIBRARY (libtsc_clock.so) both reads are its tsc_now(), in code
 * that dlopen maps once the server runs.
 */
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <x86intrin.h>

unsigned char cmc_state[1];

static uint64_t taken_at;
static uint64_t (*tsc_now)(void);

static uint64_t read_tsc(void) { return tsc_now ? tsc_now() : __rdtsc(); }

static uint64_t read_tscp(void) {
  unsigned aux = 0;
  return tsc_now ? tsc_now() : __rdtscp(&aux);
}

static const char *handle(const char *line) {
  if (strcmp(line, "TAKE") == 0) {
    cmc_state[0] = 1;
    taken_at = read_tsc();
  }
  if (strcmp(line, "RENEW") == 0 && cmc_state[0] == 1) {
    const uint64_t now = read_tscp();
    if (now - taken_at > 5000000000U) {
      cmc_state[0] = 0;
      return "EXPIRED\n";
    }
    taken_at = now;
  }
  return "OK\n";
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3)
    return 2;
  if (argc == 3) {
    void *library = dlopen(argv[2], RTLD_NOW);
    tsc_now = library ? (uint64_t(*)(void))dlsym(library, "tsc_now") : NULL;
    if (tsc_now == NULL)
      return 3;
  }
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 1;
  const int client = accept(listener, NULL, NULL);
  char line[64];
  size_t used = 0;
  for (;;) {
    if (read(client, line + used, 1) != 1)
      return 0;
    if (line[used] != '\n' && used + 1 < sizeof line) {
      ++used;
      continue;
    }
    line[used] = '\0';
    used = 0;
    const char *reply = handle(line);
    if (write(client, reply, strlen(reply)) != (ssize_t)strlen(reply))
      return 1;
  }
}
