/* proc_times PORT: a one-connection line server whose bug hangs on the
 * kernel's clock as /proc shows it, for cmc's tests of its control of
 * /proc's times.
 *
 * "SET a\n" sets cmc_state[0]. "SET b\n" reads /proc/uptime (with stdio:
 * read()), the start time of /proc/self/stat (with read()) and the boot
 * time of /proc/stat, keeps them in seen[], sets cmc_state[1], and loses
 * the update of a (clears cmc_state[0]) when the hundredths of the uptime
 * or the start time in ticks are odd. Replies "OK\n" to every line, or
 * "LOST\n" when it lost the update.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

unsigned char cmc_state[2];
/* Hundredths of the uptime, the start time, the boot time. */
long long seen[3];

static long long uptime_hundredths(void) {
  FILE *file = fopen("/proc/uptime", "r");
  long long seconds = 0;
  int hundredths = 0;
  if (file == NULL || fscanf(file, "%lld.%d", &seconds, &hundredths) != 2)
    exit(3);
  fclose(file);
  return seconds * 100 + hundredths;
}

/* Field 22 of /proc/self/stat, after the name in parentheses. */
static long long start_time(void) {
  char text[1024];
  const int fd = open("/proc/self/stat", O_RDONLY);
  const ssize_t got = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
  if (got <= 0)
    exit(3);
  close(fd);
  text[got] = '\0';
  const char *field = strrchr(text, ')');
  for (int k = 2; field != NULL && k < 22; ++k)
    field = strchr(field + 1, ' ');
  if (field == NULL)
    exit(3);
  return strtoll(field + 1, NULL, 10);
}

static long long boot_time(void) {
  FILE *file = fopen("/proc/stat", "r");
  char line[4096];
  long long btime = -1;
  while (file != NULL && fgets(line, sizeof line, file) != NULL)
    if (sscanf(line, "btime %lld", &btime) == 1)
      break;
  if (file == NULL || btime < 0)
    exit(3);
  fclose(file);
  return btime;
}

static const char *handle(const char *line) {
  if (strcmp(line, "SET a") == 0) {
    cmc_state[0] = 1;
    return "OK\n";
  }
  if (strcmp(line, "SET b") == 0) {
    seen[0] = uptime_hundredths();
    seen[1] = start_time();
    seen[2] = boot_time();
    cmc_state[1] = 1;
    if (seen[0] % 2 == 1 || seen[1] % 2 == 1) {
      cmc_state[0] = 0;
      return "LOST\n";
    }
    return "OK\n";
  }
  return "ERR\n";
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 1;
  const int client = accept(listener, NULL, NULL);
  char line[256];
  size_t used = 0;
  while (1) {
    const ssize_t got = read(client, line + used, sizeof line - 1 - used);
    if (got <= 0)
      return 0;
    used += (size_t)got;
    char *end;
    while ((end = memchr(line, '\n', used)) != NULL) {
      *end = '\0';
      const char *reply = handle(line);
      write(client, reply, strlen(reply));
      used -= (size_t)(end + 1 - line);
      memmove(line, end + 1, used);
    }
    if (used == sizeof line - 1)
      used = 0;
  }
}
