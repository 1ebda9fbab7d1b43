/* chatty PORT OUT ERR: a server of one client, two one-byte cells, as
 * demo/kv: "a\n" sets cmc_state[0], "b\n" cmc_state[1], "crash\n" aborts.
 * Before each answer it writes OUT bytes to stdout and ERR bytes to stderr
 * (lines of 'x's), each stream's last line "chatty: STREAM done M\n", M
 * the message's first letter: a server logging at a debug level, which
 * writes more in one step than a pipe holds. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

unsigned char cmc_state[2];

static void write_all(int fd, const char *bytes, size_t length) {
  while (length > 0) {
    ssize_t wrote = write(fd, bytes, length);
    if (wrote <= 0)
      exit(2);
    bytes += wrote;
    length -= (size_t)wrote;
  }
}

/* bytes bytes in all, the last line included; every line ends in '\n'. */
static void chatter(int fd, const char *stream, char message, size_t bytes) {
  static char line[4096];
  char last[64];
  int ending =
      snprintf(last, sizeof last, "chatty: %s done %c\n", stream, message);
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  size_t left = bytes > (size_t)ending ? bytes - (size_t)ending : 0;
  while (left > 0) {
    size_t chunk = left < sizeof line ? left : sizeof line;
    write_all(fd, line + sizeof line - chunk, chunk);
    left -= chunk;
  }
  write_all(fd, last, (size_t)ending);
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  size_t out = strtoul(argv[2], NULL, 10);
  size_t err = strtoul(argv[3], NULL, 10);
  int server = socket(AF_INET, SOCK_STREAM, 0);
  int on = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(server, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(server, 8) != 0)
    return 1;
  int client = accept(server, NULL, NULL);
  char message[64];
  ssize_t got;
  while ((got = read(client, message, sizeof message - 1)) > 0) {
    message[got] = '\0';
    chatter(STDOUT_FILENO, "stdout", message[0], out);
    chatter(STDERR_FILENO, "stderr", message[0], err);
    if (strcmp(message, "a\n") == 0)
      cmc_state[0] = 1;
    else if (strcmp(message, "b\n") == 0)
      cmc_state[1] = 1;
    else if (strcmp(message, "crash\n") == 0)
      abort();
    write_all(client, "ok\n", 3);
  }
  return 0;
}
