#define _GNU_SOURCE
/* threads MODE PORT: a one-connection line server whose work is done by a
 * worker thread, for cmc's tests of threaded targets. An idle helper
 * thread also starts and never wakes (as redis's background threads).
 *
 * "SET a\n" / "SET b\n": the main thread hands the job to the worker
 * (a condition variable) and waits until it is done; the worker sets
 * cmc_state[0] or [1] and replies "OK\n".
 * MODE pool: the worker waits for jobs with no timeout.
 * MODE timed: the worker waits with a 5 s timeout (CLOCK_REALTIME, as
 * pthread_cond_timedwait does); each timeout sets cmc_state[2].
 * MODE deadlock: as pool, but "JOIN\n" makes the main thread join the
 * worker, which never ends: every thread then waits on a futex.
 * MODE spin: as pool, but the main thread spins (no system call) until the
 * worker is done, instead of waiting on a condition variable.
 * MODE orphan: as pool, but a third thread serves the connection, and the
 * main thread ends (pthread_exit) once it has started them.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

unsigned char cmc_state[3];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_posted = PTHREAD_COND_INITIALIZER;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER;
static int job = -1; /* the cell to set; -1: none */
static int client = -1;
static int timed;
static volatile int spun; /* spin: the jobs done */

static void *idle(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
  while (1)
    pthread_cond_wait(&never, &lock);
  return NULL;
}

static void wait_for_job(void) {
  if (!timed) {
    pthread_cond_wait(&job_posted, &lock);
    return;
  }
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  if (pthread_cond_timedwait(&job_posted, &lock, &deadline) != 0)
    cmc_state[2] = 1;
}

static void *worker(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  while (1) {
    while (job < 0)
      wait_for_job();
    cmc_state[job] = 1;
    if (write(client, "OK\n", 3) != 3)
      exit(3);
    job = -1;
    spun++;
    pthread_cond_signal(&job_done);
  }
  return NULL;
}

static int listener = -1;
static int spin;
static pthread_t working;

/* Serves the connection: hands each line to the worker. */
static void *serve(void *unused) {
  (void)unused;
  client = accept(listener, NULL, NULL);
  char line[64];
  ssize_t got;
  while ((got = read(client, line, sizeof line - 1)) > 0) {
    line[got] = '\0';
    if (strcmp(line, "JOIN\n") == 0) {
      pthread_join(working, NULL);
      continue;
    }
    pthread_mutex_lock(&lock);
    job = strcmp(line, "SET b\n") == 0 ? 1 : 0;
    pthread_cond_signal(&job_posted);
    const int before = spun;
    if (spin) {
      pthread_mutex_unlock(&lock);
      while (spun == before)
        ;
      continue;
    }
    while (job >= 0)
      pthread_cond_wait(&job_done, &lock);
    pthread_mutex_unlock(&lock);
  }
  exit(0);
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  timed = strcmp(argv[1], "timed") == 0;
  spin = strcmp(argv[1], "spin") == 0;
  listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons(atoi(argv[2])),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 3;
  pthread_t idler;
  if (pthread_create(&idler, NULL, idle, NULL) != 0 ||
      pthread_create(&working, NULL, worker, NULL) != 0)
    return 3;
  if (strcmp(argv[1], "orphan") != 0)
    serve(NULL);
  pthread_t serving;
  if (pthread_create(&serving, NULL, serve, NULL) != 0)
    return 3;
  pthread_exit(NULL);
}
