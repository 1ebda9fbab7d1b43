/* fork_kv: heap_kv's protocol served by a process per connection, its
 * cells in a file. Nothing of the cells is in the parent's memory: a
 * check must follow the children and read the files.
 *
 * usage: fork_kv PORT
 * The parent accepts a connection, forks a child to serve it, closes its
 * copy and reaps the children that have ended before it accepts again.
 * The child serves one client until it hangs up: "SET x\n" (x a letter
 * 'a'...'z') sets cell x in the file "cells" of the working directory
 * and replies "OK\n"; "GET\n" replies with the set cells in order,
 * "a=1 b=1\n" (a lone "\n" when none is set); anything else gets "ERR\n".
 * The file holds one byte per cell, '1' for set, read and written whole
 * at each SET.
 * Built with -DBUG, "SET a" also clears cell b: a set cell is lost.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CELLS 26

static const char kFile[] = "cells";

/* The cells as the file holds them now (none when it does not exist). */
static void load(char cells[CELLS]) {
  memset(cells, '0', CELLS);
  const int fd = open(kFile, O_RDONLY);
  if (fd < 0)
    return;
  if (read(fd, cells, CELLS) < 0)
    memset(cells, '0', CELLS);
  close(fd);
}

static int store(const char cells[CELLS]) {
  const int fd = open(kFile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return -1;
  const int written = write(fd, cells, CELLS) == CELLS ? 0 : -1;
  close(fd);
  return written;
}

static int set_cell(int cell) {
  char cells[CELLS];
  load(cells);
  cells[cell] = '1';
#ifdef BUG
  if (cell == 0)
    cells[1] = '0';
#endif
  return store(cells);
}

static void reply(int client, const char *text, size_t length) {
  if (write(client, text, length) < 0)
    exit(1);
}

static void get(int client) {
  char cells[CELLS];
  char list[CELLS * 4 + 1];
  size_t used = 0;
  load(cells);
  for (int cell = 0; cell < CELLS; ++cell)
    if (cells[cell] == '1')
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%c=1",
                               used == 0 ? "" : " ", 'a' + cell);
  list[used++] = '\n';
  reply(client, list, used);
}

static void handle(int client, const char *line) {
  if (strcmp(line, "GET") == 0) {
    get(client);
    return;
  }
  if (strncmp(line, "SET ", 4) == 0 && line[4] >= 'a' && line[4] <= 'z' &&
      line[5] == '\0' && set_cell(line[4] - 'a') == 0) {
    reply(client, "OK\n", 3);
    return;
  }
  reply(client, "ERR\n", 4);
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
      handle(client, buffer);
      used -= (size_t)(newline + 1 - buffer);
      memmove(buffer, newline + 1, used + 1);
    }
    if (used == sizeof buffer - 1)
      used = 0; /* a line too long: dropped */
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
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)atoi(argv[1])),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 16) != 0) {
    perror("fork_kv: bind/listen");
    return 1;
  }
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
    const int client = accept(listener, NULL, NULL);
    if (client < 0)
      continue;
    const pid_t child = fork();
    if (child == 0) {
      close(listener);
      serve(client);
      _exit(0);
    }
    close(client);
  }
}
