#define _GNU_SOURCE
/* clocks MODE PORT: a one-connection line server that reads time and
 * randomness every way a server can, for cmc's tests of its control of
 * them. Replies "OK\n" to every line.
 *
 * MODE says how it waits for its client's next line, always with a 5 s
 * timeout: poll, ppoll, select, epoll; a timeout sets cmc_state[0]. Mode
 * timerfd instead polls the client and a timerfd armed once, 5 s after
 * start; its expiry sets cmc_state[0].
 * Mode entropy also fills entropy[] before listening (getrandom,
 * /dev/urandom, AT_RANDOM, rdtsc); mode vvar reads the kernel's clock page
 * [vvar] directly before listening, a time read no vDSO patch can catch.
 *
 * Messages: "SET b\n" sets cmc_state[1]; "SLEEP\n" sleeps 3 s (nanosleep;
 * in mode futex a FUTEX_WAIT with a 3 s timeout, in mode futexabs a
 * FUTEX_WAIT_BITSET until 3 s from now on CLOCK_MONOTONIC) then sets
 * cmc_state[2]; "TIME\n" stores the clocks in times[].
 */
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

unsigned char cmc_state[3];
unsigned char entropy[40];
/* time(), gettimeofday() seconds, CLOCK_REALTIME and CLOCK_MONOTONIC. */
int64_t times[4];

static void fill_entropy(void) {
  if (getrandom(entropy, 8, 0) != 8)
    exit(3);
  FILE *urandom = fopen("/dev/urandom", "rb");
  if (urandom == NULL || fread(entropy + 8, 1, 8, urandom) != 8)
    exit(3);
  fclose(urandom);
  memcpy(entropy + 16, (const void *)getauxval(AT_RANDOM), 16);
  const uint64_t tsc = __rdtsc();
  memcpy(entropy + 32, &tsc, 8);
}

static void read_vvar(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[256];
  while (maps != NULL && fgets(line, sizeof line, maps) != NULL)
    if (strstr(line, "[vvar") != NULL) {
      const volatile unsigned char *page =
          (const unsigned char *)strtoul(line, NULL, 16);
      cmc_state[0] = *page;
    }
}

static void store_times(void) {
  struct timeval tv;
  struct timespec real, mono;
  times[0] = time(NULL);
  gettimeofday(&tv, NULL);
  times[1] = tv.tv_sec;
  clock_gettime(CLOCK_REALTIME, &real);
  times[2] = real.tv_sec;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  times[3] = mono.tv_sec;
}

/* Waits up to 5 s for client to be readable; 0 on a timeout. */
static int wait_readable(const char *mode, int client, int epoll, int timer) {
  if (strcmp(mode, "timerfd") == 0) {
    struct pollfd entries[2] = {{client, POLLIN, 0}, {timer, POLLIN, 0}};
    poll(entries, 2, -1);
    uint64_t expirations = 0;
    if ((entries[1].revents & POLLIN) != 0 &&
        read(timer, &expirations, sizeof expirations) == sizeof expirations)
      return 0;
    return 1;
  }
  if (strcmp(mode, "select") == 0) {
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(client, &readable);
    struct timeval timeout = {5, 0};
    return select(client + 1, &readable, NULL, NULL, &timeout);
  }
  if (strcmp(mode, "epoll") == 0) {
    struct epoll_event event;
    return epoll_wait(epoll, &event, 1, 5000);
  }
  struct pollfd entry = {client, POLLIN, 0};
  if (strcmp(mode, "ppoll") == 0) {
    const struct timespec timeout = {5, 0};
    return ppoll(&entry, 1, &timeout, NULL);
  }
  return poll(&entry, 1, 5000);
}

/* Sleeps 3 s as mode says. */
static void sleep_three(const char *mode) {
  struct timespec three = {3, 0};
  static uint32_t word;
  if (strcmp(mode, "futex") == 0) {
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &three, NULL, 0);
  } else if (strcmp(mode, "futexabs") == 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    three.tv_sec += now.tv_sec;
    three.tv_nsec = now.tv_nsec;
    syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &three, NULL,
            FUTEX_BITSET_MATCH_ANY);
  } else {
    nanosleep(&three, NULL);
  }
}

static void handle(const char *mode, const char *line) {
  if (strcmp(line, "SET b") == 0)
    cmc_state[1] = 1;
  if (strcmp(line, "SLEEP") == 0) {
    sleep_three(mode);
    cmc_state[2] = 1;
  }
  if (strcmp(line, "TIME") == 0)
    store_times();
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  const char *mode = argv[1];
  if (strcmp(mode, "entropy") == 0)
    fill_entropy();
  if (strcmp(mode, "vvar") == 0)
    read_vvar();
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[2]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 1;
  const int client = accept(listener, NULL, NULL);
  const int epoll = epoll_create1(0);
  struct epoll_event event = {EPOLLIN, {.fd = client}};
  epoll_ctl(epoll, EPOLL_CTL_ADD, client, &event);
  const int timer = timerfd_create(CLOCK_MONOTONIC, 0);
  const struct itimerspec five = {{0, 0}, {5, 0}};
  timerfd_settime(timer, 0, &five, NULL);
  char line[64];
  size_t used = 0;
  for (;;) {
    if (wait_readable(mode, client, epoll, timer) == 0) {
      cmc_state[0] = 1;
      continue;
    }
    if (read(client, line + used, 1) != 1)
      return 0;
    if (line[used] != '\n' && used + 1 < sizeof line) {
      ++used;
      continue;
    }
    line[used] = '\0';
    used = 0;
    handle(mode, line);
    if (write(client, "OK\n", 3) != 3)
      return 1;
  }
}
