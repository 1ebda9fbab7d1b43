#define _GNU_SOURCE
/* capture_target PORT: an epoll line server for the tests of cmc's
 * whole-process capture. Its state beyond the stack is on the heap: a
 * 64-byte cell malloc'd at start, which "SET x\n" fills with x (so two
 * states differ only in heap bytes), replying "OK\n". It also holds a
 * pipe, an eventfd, a helper thread parked on a condition variable for
 * good, and 1 MiB of anonymous memory it never touches.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static char *cell;
static void *untouched;

static void *idle(void *unused) {
  (void)unused;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&lock);
  while (1)
    pthread_cond_wait(&never, &lock);
  return NULL;
}

static int listen_on(int port) {
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((unsigned short)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(sock, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(sock, 8) != 0)
    exit(1);
  return sock;
}

static void serve(int epoll, int fd) {
  char line[64];
  const ssize_t got = read(fd, line, sizeof line - 1);
  if (got <= 0) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    return;
  }
  line[got] = '\0';
  if (strncmp(line, "SET ", 4) == 0) {
    strncpy(cell, line + 4, 63);
    cell[strcspn(cell, "\n")] = '\0';
  }
  write(fd, "OK\n", 3);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  cell = calloc(1, 64);
  untouched = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int pipe_ends[2];
  if (cell == NULL || untouched == MAP_FAILED || pipe(pipe_ends) != 0 ||
      eventfd(0, 0) < 0)
    return 1;
  pthread_t helper;
  pthread_create(&helper, NULL, idle, NULL);
  const int listener = listen_on(atoi(argv[1]));
  const int epoll = epoll_create1(0);
  struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
  epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
  while (1) {
    if (epoll_wait(epoll, &event, 1, -1) != 1)
      continue;
    if (event.data.fd != listener) {
      serve(epoll, event.data.fd);
      continue;
    }
    const int client = accept(listener, NULL, NULL);
    struct epoll_event readable = {.events = EPOLLIN, .data.fd = client};
    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &readable);
  }
}
