/* heap_kv: kv (the seed's demo) with its cells in the heap, as a real
 * server keeps its data.
 *
 * usage: heap_kv PORT
 * Protocol: one line per message. "SET x\n" (x a cell letter 'a' ... 'z')
 * sets cell x and replies "OK\n"; "GET\n" replies with the set cells in
 * order, "a=1 b=1\n" (a lone "\n" when none is set); anything else gets
 * "ERR\n".
 * A set cell is a node of a list sorted by letter, malloc'd at its first
 * SET: the list's head pointer is the only global. Each message is read
 * into a scratch buffer malloc'd once the message has arrived and freed
 * after its reply, so between messages its text lies in a free chunk (and
 * the tcache holds that chunk): garbage, not state.
 * Built with -DBUG, "SET a" also unlinks and frees cell b: a set cell is
 * lost.
 */
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

struct cell {
  struct cell *next;
  char name;
};

static struct cell *cells;

/* The link that points at cell name, or at the first cell after it. */
static struct cell **find(char name) {
  struct cell **link = &cells;
  while (*link != NULL && (*link)->name < name)
    link = &(*link)->next;
  return link;
}

static int set_cell(char name) {
  struct cell **link = find(name);
  if (*link == NULL || (*link)->name != name) {
    struct cell *added = malloc(sizeof *added);
    if (added == NULL)
      return -1;
    added->name = name;
    added->next = *link;
    *link = added;
  }
#ifdef BUG
  if (name == 'a') {
    struct cell **b = find('b');
    if (*b != NULL && (*b)->name == 'b') {
      struct cell *lost = *b;
      *b = lost->next;
      free(lost);
    }
  }
#endif
  return 0;
}

/* Writes text to the client; 0 on success. */
static int reply(int client, const char *text, size_t length) {
  while (length > 0) {
    const ssize_t wrote = write(client, text, length);
    if (wrote <= 0)
      return -1;
    text += wrote;
    length -= (size_t)wrote;
  }
  return 0;
}

/* The reply is built in a chunk of its own, freed once written. */
static int get(int client) {
  char *text = malloc(4 * 26 + 1);
  if (text == NULL)
    return -1;
  size_t used = 0;
  for (const struct cell *cell = cells; cell != NULL; cell = cell->next) {
    text[used++] = cell->name;
    text[used++] = '=';
    text[used++] = '1';
    text[used++] = cell->next != NULL ? ' ' : '\n';
  }
  if (used == 0)
    text[used++] = '\n';
  const int result = reply(client, text, used);
  free(text);
  return result;
}

/* Answers one line (without its newline); 0 on success. */
static int handle(int client, const char *line) {
  if (strcmp(line, "GET") == 0)
    return get(client);
  if (strncmp(line, "SET ", 4) == 0 && line[4] >= 'a' && line[4] <= 'z' &&
      line[5] == '\0' && set_cell(line[4]) == 0)
    return reply(client, "OK\n", 3);
  return reply(client, "ERR\n", 4);
}

/* Waits for the client's next bytes and returns how many there are; 0 when
 * it hung up. */
static int arrived(int client) {
  struct pollfd readable = {.fd = client, .events = POLLIN};
  int pending = 0;
  if (poll(&readable, 1, -1) != 1 || ioctl(client, FIONREAD, &pending) != 0)
    return 0;
  return pending;
}

/* A line split across arrivals, kept in a chunk of its own until its end
 * arrives. */
struct carried {
  char *text;
  size_t length;
};

/* Reads the pending bytes of the client's next message into a scratch
 * buffer, answers its lines and frees the buffer; 0 on success. Not
 * inlined: the pointers it spills (into the message, into the list) stay
 * in its own frame, below serve's. */
__attribute__((noinline)) static int take_message(int client, int pending,
                                                  struct carried *carried) {
  char *scratch = malloc(carried->length + (size_t)pending + 1);
  if (scratch == NULL)
    return -1;
  if (carried->length > 0)
    memcpy(scratch, carried->text, carried->length);
  free(carried->text);
  carried->text = NULL;
  const ssize_t got = read(client, scratch + carried->length, (size_t)pending);
  if (got <= 0) {
    free(scratch);
    return -1;
  }
  const size_t used = carried->length + (size_t)got;
  scratch[used] = '\0';
  char *line = scratch;
  char *newline;
  int failed = 0;
  while (!failed && (newline = strchr(line, '\n')) != NULL) {
    *newline = '\0';
    failed = handle(client, line) != 0;
    line = newline + 1;
  }
  carried->length = used - (size_t)(line - scratch);
  if (!failed && carried->length > 0) {
    carried->text = malloc(carried->length);
    if (carried->text == NULL)
      failed = 1;
    else
      memcpy(carried->text, line, carried->length);
  }
  free(scratch);
  return failed ? -1 : 0;
}

/* Serves one client until it hangs up. */
static void serve(int client) {
  struct carried carried = {NULL, 0};
  for (;;) {
    const int pending = arrived(client);
    if (pending <= 0 || take_message(client, pending, &carried) != 0)
      break;
  }
  free(carried.text);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
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
    perror("heap_kv: listen");
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
