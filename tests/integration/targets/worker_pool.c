#define _GNU_SOURCE
/* worker_pool MODE PORT: a one-connection line server whose work is done by
 * a pool of four worker threads fed over a mutex and a condition variable,
 * for cmc's tests of its scheduler.
 *
 * "ADD a\n" / "ADD b\n": the main thread posts two jobs at once and waits
 * until both are done; each job adds 1 to the counter (cmc_state[2]) and
 * the worker that did it replies "done\n". The main thread then sets
 * cmc_state[0] (a) or [1] (b) and replies "sum N\n", or "LOST\n" when the
 * counter is not twice the number of ADDs so far (modulo 256, its size).
 * MODE pool: a job adds under the lock.
 * MODE racy: a job reads the counter, replies, and writes it back plus one,
 * outside the lock: another worker that runs between the two (one
 * preemption at the reply's write) loses an update.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { kWorkers = 4, kJobsPerAdd = 2 };

unsigned char cmc_state[3];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int queued;  /* jobs posted, not yet taken */
static int pending; /* jobs posted, not yet done */
static int client = -1;
static int racy;

static void reply(const char *text) {
  const size_t length = strlen(text);
  if (write(client, text, length) != (ssize_t)length)
    exit(3);
}

static void do_job(void) {
  if (racy) {
    const unsigned char seen = cmc_state[2];
    reply("done\n");
    cmc_state[2] = seen + 1;
    return;
  }
  pthread_mutex_lock(&lock);
  cmc_state[2]++;
  pthread_mutex_unlock(&lock);
  reply("done\n");
}

static void *worker(void *unused) {
  (void)unused;
  while (1) {
    pthread_mutex_lock(&lock);
    while (queued == 0)
      pthread_cond_wait(&work, &lock);
    queued--;
    pthread_mutex_unlock(&lock);
    do_job();
    pthread_mutex_lock(&lock);
    if (--pending == 0)
      pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  racy = strcmp(argv[1], "racy") == 0;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons(atoi(argv[2])),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 3;
  for (int i = 0; i < kWorkers; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0)
      return 3;
  }
  client = accept(listener, NULL, NULL);
  char line[64];
  ssize_t got;
  int adds = 0;
  while ((got = read(client, line, sizeof line - 1)) > 0) {
    line[got] = '\0';
    if (strncmp(line, "ADD ", 4) != 0)
      continue;
    pthread_mutex_lock(&lock);
    queued += kJobsPerAdd;
    pending += kJobsPerAdd;
    pthread_cond_broadcast(&work);
    while (pending > 0)
      pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
    adds++;
    cmc_state[line[4] == 'b' ? 1 : 0] = 1;
    char text[32];
    if (cmc_state[2] != (unsigned char)(adds * kJobsPerAdd))
      snprintf(text, sizeof text, "LOST\n");
    else
      snprintf(text, sizeof text, "sum %d\n", cmc_state[2]);
    reply(text);
  }
  return 0;
}
