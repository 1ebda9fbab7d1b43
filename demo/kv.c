/* kv: an ordinary one-connection TCP key-value server, the seed's demo.
 *
 * usage: kv PORT
 * Protocol: one line per message, "SET x\n" where x is a cell letter
 * ('a', 'b', ...); the reply is "OK\n" (or "ERR\n"). The cells are
 * unsigned char cmc_state[CELLS]; store mirrors them between a version
 * byte and a guard byte, so that any global can serve as the region.
 * Built with -DBUG, "SET a" also clears cell b: a set cell is lost.
 *
 * Built with -DCLOCK (demo clock_kv), every SET also stores the time it
 * read with clock_gettime in last_set, a second region; and the BUG strikes
 * only once 5 s have passed since the server started.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef CELLS
#define CELLS 2
#endif

unsigned char cmc_state[CELLS];
unsigned char store[1 + CELLS + 1];
#ifdef CLOCK
struct timespec last_set;
static struct timespec started;
#endif

#ifdef BUG
/* Whether the BUG may strike now. */
static int bug_armed(void) {
#ifdef CLOCK
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec - started.tv_sec >= 5;
#else
  return 1;
#endif
}
#endif

static void set_cell(int cell) {
  cmc_state[cell] = 1;
#ifdef CLOCK
  clock_gettime(CLOCK_REALTIME, &last_set);
#endif
#ifdef BUG
  if (cell == 0 && CELLS > 1 && bug_armed())
    cmc_state[1] = 0;
#endif
  memcpy(store + 1, cmc_state, CELLS);
}

static const char *handle(const char *line) {
  if (strncmp(line, "SET ", 4) == 0 && line[5] == '\0') {
    const int cell = line[4] - 'a';
    if (cell >= 0 && cell < CELLS) {
      set_cell(cell);
      return "OK\n";
    }
  }
  return "ERR\n";
}

/* Serves one client until it hangs up. */
static void serve(int client) {
  char buffer[256];
  size_t used = 0;
  for (;;) {
    const ssize_t got = read(client, buffer + used, sizeof buffer - 1 - used);
    if (got <= 0)
      return;
    used += (size_t)got;
    buffer[used] = '\0';
    char *newline;
    while ((newline = strchr(buffer, '\n')) != NULL) {
      *newline = '\0';
      const char *reply = handle(buffer);
      if (write(client, reply, strlen(reply)) < 0)
        return;
      used -= (size_t)(newline + 1 - buffer);
      memmove(buffer, newline + 1, used + 1);
    }
    if (used == sizeof buffer - 1)
      used = 0; /* an overlong line is dropped */
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  memset(cmc_state, 0, sizeof cmc_state);
  memset(store, 0, sizeof store);
  store[0] = 'K';
#ifdef CLOCK
  clock_gettime(CLOCK_MONOTONIC, &started);
#endif
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listener < 0 ||
      bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 16) != 0) {
    perror("kv: listen");
    return 1;
  }
  for (;;) {
    const int client = accept(listener, NULL, NULL);
    if (client < 0)
      continue;
    serve(client);
    close(client);
  }
}
