/* journal PORT [OUTSIDE]: a one-connection line server that keeps its
 * journal in a file, journal/log, relative to its working directory (the
 * directory must exist), and nothing in memory: cmc_state stays zero.
 *
 * Messages: "ADD\n" appends a line to the journal and replies with its line
 * count, read back from the file; a fourth line aborts (the bug, reachable
 * only by a checker that tells the journal's lengths apart). "OUT\n" writes
 * OUTSIDE (an absolute path) and replies "OUT\n".
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

unsigned char cmc_state[1];

static int journal_lines(void) {
  FILE *log = fopen("journal/log", "r");
  int lines = 0;
  for (int c; log != NULL && (c = fgetc(log)) != EOF;)
    lines += c == '\n';
  if (log != NULL)
    fclose(log);
  return lines;
}

static void append(void) {
  const int fd = open("journal/log", O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0 || write(fd, "ADD\n", 4) != 4) {
    perror("journal/log");
    exit(1);
  }
  close(fd);
}

static void write_outside(const char *path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    (void)!write(fd, "out\n", 4);
    close(fd);
  }
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const int fd = open("journal/log", O_RDONLY | O_CREAT, 0644);
  if (fd < 0) {
    perror("journal/log");
    return 1;
  }
  close(fd);
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons(atoi(argv[1])),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(server, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(server, 1) != 0)
    return 1;
  const int client = accept(server, NULL, NULL);
  char line[64];
  size_t used = 0;
  for (ssize_t got;
       (got = read(client, line + used, sizeof line - used)) > 0;) {
    used += (size_t)got;
    char *end;
    while ((end = memchr(line, '\n', used)) != NULL) {
      char reply[32];
      if (strncmp(line, "ADD\n", 4) == 0) {
        append();
        const int lines = journal_lines();
        if (lines > 3)
          abort();
        snprintf(reply, sizeof reply, "%d\n", lines);
      } else if (strncmp(line, "OUT\n", 4) == 0 && argc > 2) {
        write_outside(argv[2]);
        snprintf(reply, sizeof reply, "OUT\n");
      } else {
        snprintf(reply, sizeof reply, "ERR\n");
      }
      (void)!write(client, reply, strlen(reply));
      used -= (size_t)(end + 1 - line);
      memmove(line, end + 1, used);
    }
  }
  return 0;
}
