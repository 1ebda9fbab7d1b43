#define _GNU_SOURCE
/* late_start PORT: a one-connection line server like demo/kv that sleeps
 * before it serves, as memcached does. A maintainer thread sleeps 1 s
 * before it lets the main thread listen, then sleeps 10 s at a time for
 * ever; the main thread, once listening, sleeps 1 ms more before it
 * accepts. "SET a\n" / "SET b\n" set cmc_state[0] / [1] and reply "OK\n".
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

unsigned char cmc_state[2];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started = PTHREAD_COND_INITIALIZER;
static int ready;

static void *maintainer(void *unused) {
  (void)unused;
  sleep(1);
  pthread_mutex_lock(&lock);
  ready = 1;
  pthread_cond_signal(&started);
  pthread_mutex_unlock(&lock);
  for (;;)
    sleep(10);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  pthread_t thread;
  if (pthread_create(&thread, NULL, maintainer, NULL) != 0)
    return 1;
  pthread_mutex_lock(&lock);
  while (!ready)
    pthread_cond_wait(&started, &lock);
  pthread_mutex_unlock(&lock);
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 1;
  usleep(1000);
  const int client = accept(listener, NULL, NULL);
  char line[64];
  size_t used = 0;
  while (read(client, line + used, 1) == 1) {
    if (line[used] != '\n' && used + 1 < sizeof line) {
      ++used;
      continue;
    }
    line[used] = '\0';
    used = 0;
    if (strncmp(line, "SET ", 4) == 0 && (line[4] == 'a' || line[4] == 'b'))
      cmc_state[line[4] - 'a'] = 1;
    if (write(client, "OK\n", 3) != 3)
      return 1;
  }
  return 0;
}
