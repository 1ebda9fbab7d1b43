/* lock_server: one lock shared by up to four clients, for cmc's checks
 * with several connections.
 *
 * usage: lock_server PORT
 * Protocol, one line per message on each connection: "LOCK\n" takes the
 * lock when it is free ("OK\n") or answers "BUSY\n"; "UNLOCK\n" frees it
 * when this client holds it ("OK\n"), else answers "NOT HELD\n".
 * The region held[] has one byte per connection, in the order the clients
 * connected: 2 while that client holds the lock, 0 otherwise. At most one
 * is ever set (cmc check --invariant exclusive).
 * A client that closes its connection gives the lock up.
 * Built with -DBUG, UNLOCK frees the lock whoever sends it. The holder was
 * never told: its byte becomes 1 (granted, not released, but no longer the
 * server's owner), and the next LOCK grants the lock a second time.
 */
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CLIENTS 4

unsigned char held[CLIENTS];
static int owner = -1; /* the connection holding the lock, -1 none */

static const char *handle(int client, const char *line) {
  if (strcmp(line, "LOCK") == 0) {
    if (owner >= 0)
      return "BUSY\n";
    owner = client;
    held[client] = 2;
    return "OK\n";
  }
  if (strcmp(line, "UNLOCK") == 0) {
#ifndef BUG
    if (owner != client)
      return "NOT HELD\n";
#endif
    if (owner >= 0)
      held[owner] = owner == client ? 0 : 1;
    owner = -1;
    return "OK\n";
  }
  return "ERR\n";
}

struct connection {
  int fd;
  char line[64];
  size_t used;
};

/* Reads what fd has; answers each complete line. 0 once it closed. */
static int serve(int client, struct connection *c) {
  char byte;
  if (read(c->fd, &byte, 1) != 1)
    return 0;
  if (byte != '\n' && c->used + 1 < sizeof c->line) {
    c->line[c->used++] = byte;
    return 1;
  }
  c->line[c->used] = '\0';
  c->used = 0;
  const char *reply = handle(client, c->line);
  return write(c->fd, reply, strlen(reply)) == (ssize_t)strlen(reply);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, CLIENTS) != 0)
    return 1;
  struct connection clients[CLIENTS];
  int count = 0;
  for (;;) {
    struct pollfd entries[CLIENTS + 1];
    for (int i = 0; i < count; ++i)
      entries[i] = (struct pollfd){clients[i].fd, POLLIN, 0};
    entries[count] = (struct pollfd){listener, POLLIN, 0};
    const int watched = count < CLIENTS ? count + 1 : count;
    if (poll(entries, (nfds_t)watched, -1) < 0)
      return 1;
    for (int i = 0; i < count; ++i)
      if (entries[i].revents != 0 && !serve(i, &clients[i])) {
        if (owner == i) {
          held[i] = 0;
          owner = -1;
        }
        close(clients[i].fd);
        clients[i].fd = -1; /* a closed client's slot stays taken */
      }
    if (count < CLIENTS && (entries[count].revents & POLLIN) != 0) {
      clients[count].fd = accept(listener, NULL, NULL);
      clients[count].used = 0;
      ++count;
    }
  }
}
