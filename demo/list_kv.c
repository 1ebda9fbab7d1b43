/* list_kv: a key-value server written the ordinary way, with no thought
 * of a checker: three cells kept as a sorted list of malloc'd nodes (and
 * a byte per key in present[] that says whether it has one), each message
 * read into a scratch buffer malloc'd for it and freed after its reply,
 * nothing cleared.
 *
 * usage: list_kv PORT
 * Protocol: one line per message. "SET x\n" (x one of 'a', 'b', 'c') sets
 * cell x, again and again alike, and replies "OK\n"; "GET\n" replies with
 * the set cells in order, "a=1 c=1\n" (a lone "\n" when none is set);
 * anything else gets "ERR\n".
 * Built with -DBUG, "SET a" also unlinks and frees cell b: a set cell is
 * lost.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SCRATCH 512

struct node {
  struct node *next;
  char key;
};

static struct node *list;
/* Which keys have a node: a SET of one that has needs no walk. */
static unsigned char present[3];

static struct node **link_to(char key) {
  struct node **link = &list;
  while (*link != NULL && (*link)->key < key)
    link = &(*link)->next;
  return link;
}

static int set(char key) {
  if (!present[key - 'a']) {
    struct node **link = link_to(key);
    struct node *node = malloc(sizeof *node);
    if (node == NULL)
      return -1;
    node->key = key;
    node->next = *link;
    *link = node;
    present[key - 'a'] = 1;
  }
#ifdef BUG
  if (key == 'a' && present['b' - 'a']) {
    struct node **b = link_to('b');
    struct node *lost = *b;
    if (lost != NULL) {
      *b = lost->next;
      free(lost);
    }
    present['b' - 'a'] = 0;
  }
#endif
  return 0;
}

static int send_all(int client, const char *text, size_t length) {
  while (length > 0) {
    const ssize_t wrote = write(client, text, length);
    if (wrote <= 0)
      return -1;
    text += wrote;
    length -= (size_t)wrote;
  }
  return 0;
}

static int get(int client) {
  char text[4 * 3 + 1];
  size_t used = 0;
  for (const struct node *node = list; node != NULL; node = node->next) {
    text[used++] = node->key;
    text[used++] = '=';
    text[used++] = '1';
    text[used++] = node->next != NULL ? ' ' : '\n';
  }
  if (used == 0)
    text[used++] = '\n';
  return send_all(client, text, used);
}

static int handle(int client, const char *line) {
  if (strcmp(line, "GET") == 0)
    return get(client);
  if (strncmp(line, "SET ", 4) == 0 && line[4] >= 'a' && line[4] <= 'c' &&
      line[5] == '\0' && set(line[4]) == 0)
    return send_all(client, "OK\n", 3);
  return send_all(client, "ERR\n", 4);
}

/* A line split across reads, until the rest arrives. */
static char partial[SCRATCH];
static size_t partial_length;

/* Serves one client until it hangs up. */
static void serve(int client) {
  for (;;) {
    char *scratch = malloc(SCRATCH);
    if (scratch == NULL)
      return;
    memcpy(scratch, partial, partial_length);
    const ssize_t got =
        read(client, scratch + partial_length, SCRATCH - 1 - partial_length);
    if (got <= 0) {
      free(scratch);
      return;
    }
    const size_t used = partial_length + (size_t)got;
    scratch[used] = '\0';
    char *line = scratch;
    char *end;
    int failed = 0;
    while (!failed && (end = strchr(line, '\n')) != NULL) {
      *end = '\0';
      failed = handle(client, line) != 0;
      line = end + 1;
    }
    partial_length = used - (size_t)(line - scratch);
    if (partial_length == SCRATCH - 1)
      partial_length = 0; /* an overlong line is dropped */
    memcpy(partial, line, partial_length);
    free(scratch);
    if (failed)
      return;
  }
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
    perror("list_kv: listen");
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
