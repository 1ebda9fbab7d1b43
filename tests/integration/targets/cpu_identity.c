#define _GNU_SOURCE
/* cpu_identity PORT: a one-connection key-value line server whose bug
 * depends on which CPU it runs on, for cmc's tests of its control of CPU
 * identity.
 *
 * "SET a\n" sets cmc_state[0], "SET b\n" cmc_state[1]; each reply is
 * "OK\n". Before each message it reads which CPU it is on into cpu[]:
 * sched_getcpu(), the initial APIC id of cpuid leaf 1, rdpid (where cpuid
 * says the CPU has it) and the first word of sched_getaffinity's mask.
 * The bug: on any CPU but CPU 0 (a CPU number, APIC id or rdpid not 0, or
 * CPU 1 in the affinity mask), "SET b" loses cell a (cmc_state[0] = 0,
 * what an invariant sticky finds) and replies "LOST\n".
 *
 * It also times by the TSC at the frequency cpuid leaf 0x15 states, where
 * it states one: "SET b" after a second of the monotonic clock loses cell
 * a too when the TSC says another time, by more than a millisecond.
 */
#include <cpuid.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

unsigned char cmc_state[2];
/* sched_getcpu, APIC id, rdpid, affinity mask: the state the bug reads. */
uint64_t cpu[4];

static uint64_t tsc_khz;
static uint64_t tsc_start;
static int64_t mono_start;

static int64_t monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void read_identity(void) {
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  cpu[0] = (uint64_t)sched_getcpu();
  __cpuid(1, eax, ebx, ecx, edx);
  cpu[1] = ebx >> 24;
  cpu[2] = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ecx & (1U << 22))) {
    uint64_t id = 0;
    __asm__ volatile("rdpid %0" : "=r"(id));
    cpu[2] = id;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  cpu[3] = sched_getaffinity(0, sizeof set, &set) == 0 ? set.__bits[0] : ~0UL;
}

static int on_cpu_zero(void) {
  return cpu[0] == 0 && cpu[1] == 0 && cpu[2] == 0 && cpu[3] == 1;
}

/* Whether the TSC, at the frequency cpuid states, agrees with the
 * monotonic clock (1 when cpuid states none or under a second passed). */
static int tsc_agrees(void) {
  const int64_t elapsed = monotonic_ns() - mono_start;
  if (tsc_khz == 0 || elapsed < 1000000000)
    return 1;
  const uint64_t ticks = __rdtsc() - tsc_start;
  const int64_t by_tsc = (int64_t)(ticks * 1000 / tsc_khz * 1000);
  return llabs(by_tsc - elapsed) < 1000000;
}

static void find_tsc_rate(void) {
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid_count(0x15, 0, &eax, &ebx, &ecx, &edx) && eax != 0 &&
      ebx != 0 && ecx != 0)
    tsc_khz = (uint64_t)ecx * ebx / eax / 1000;
  tsc_start = __rdtsc();
  mono_start = monotonic_ns();
}

static const char *handle(const char *line) {
  read_identity();
  if (strcmp(line, "SET a") == 0)
    cmc_state[0] = 1;
  if (strcmp(line, "SET b") == 0) {
    cmc_state[1] = 1;
    if (!on_cpu_zero() || !tsc_agrees()) {
      cmc_state[0] = 0;
      return "LOST\n";
    }
  }
  return "OK\n";
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  find_tsc_rate();
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
    if (write(client, reply, strlen(reply)) < 0)
      return 1;
  }
}
