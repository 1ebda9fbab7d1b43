/* log_server: a one-connection TCP server that keeps a log in the file
 * "log" of its working directory, the demo of cmc check --crash.
 *
 * usage: log_server PORT
 * Protocol: "APPEND x\n" appends the line "x" to the log and replies
 * "OK\n"; "GET\n" replies the log's lines, then "END\n".
 *
 * It fsyncs the log after each append, before it replies OK, and fsyncs
 * its directory after it creates the log: an acknowledged line survives a
 * crash. Built with -DBUG it acknowledges first and fsyncs every second
 * append only (a group commit): a crash after an odd append loses a line
 * it acknowledged.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int log_fd = -1;
#ifdef BUG
static int unsynced; /* appends since the last fsync */
#endif

/* The log, created and made durable (its name too) if it is new. */
static int open_log(void) {
  const int fd = open("log", O_RDWR | O_APPEND | O_CREAT, 0644);
  const int directory = open(".", O_RDONLY | O_DIRECTORY);
  if (fd < 0 || directory < 0 || fsync(fd) != 0 || fsync(directory) != 0)
    return -1;
  close(directory);
  return fd;
}

static const char *append(const char *line) {
  char record[256];
  const int length = snprintf(record, sizeof record, "%s\n", line);
  if (length <= 0 || (size_t)length >= sizeof record ||
      write(log_fd, record, (size_t)length) != length)
    return "ERR\n";
#ifdef BUG
  if (++unsynced == 2) {
    fsync(log_fd);
    unsynced = 0;
  }
#else
  if (fsync(log_fd) != 0)
    return "ERR\n";
#endif
  return "OK\n";
}

/* Replies the log's lines and "END\n". */
static int get(int client) {
  char buffer[4096];
  ssize_t got;
  off_t at = 0;
  while ((got = pread(log_fd, buffer, sizeof buffer, at)) > 0) {
    if (write(client, buffer, (size_t)got) != got)
      return -1;
    at += got;
  }
  return write(client, "END\n", 4) == 4 ? 0 : -1;
}

/* Handles one line; -1 when the client is gone. */
static int handle(int client, const char *line) {
  const char *reply = "ERR\n";
  if (strcmp(line, "GET") == 0)
    return get(client);
  if (strncmp(line, "APPEND ", 7) == 0)
    reply = append(line + 7);
  return write(client, reply, strlen(reply)) < 0 ? -1 : 0;
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
      if (handle(client, buffer) != 0)
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
  log_fd = open_log();
  if (log_fd < 0) {
    perror("log_server: log");
    return 1;
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
    perror("log_server: listen");
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
