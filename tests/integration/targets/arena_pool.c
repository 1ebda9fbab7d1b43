#define _GNU_SOURCE
/* arena_pool PORT: a one-connection line server whose work is done by a
 * pool of three worker threads that malloc, for cmc's tests of the
 * canonical heap of a threaded process. glibc gives each thread that
 * mallocs an arena of its own (a heap mmap'd at a 64 MiB-aligned address),
 * so the workers' chunks live in thread arenas.
 *
 * "ADD a\n" / "ADD b\n": the main thread posts one job and waits until it
 * is done. The worker that takes it counts the letter in a tally it
 * mallocs the first time the letter is seen, allocates and frees a scratch
 * buffer (a free chunk in its arena), and replies "done\n". The state is
 * the two tallies: ADD a then ADD b and ADD b then ADD a reach the same
 * one, whichever worker did each job.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { kWorkers = 3 };

struct tally {
  char letter;
  unsigned count;
};

unsigned char cmc_state[2]; /* the tallies' counts, for --region */
static struct tally *tallies[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int job = -1; /* the letter's index, -1 when none is posted */
static int pending;
static int client = -1;

static void reply(const char *text) {
  const size_t length = strlen(text);
  if (write(client, text, length) != (ssize_t)length)
    exit(3);
}

static void do_job(int index) {
  char *scratch = malloc(200);
  if (scratch == NULL)
    exit(3);
  memset(scratch, 'a' + index, 200);
  pthread_mutex_lock(&lock);
  if (tallies[index] == NULL) {
    tallies[index] = calloc(1, sizeof *tallies[index]);
    if (tallies[index] == NULL)
      exit(3);
    tallies[index]->letter = scratch[0];
  }
  tallies[index]->count++;
  cmc_state[index] = (unsigned char)tallies[index]->count;
  pthread_mutex_unlock(&lock);
  free(scratch);
  reply("done\n");
}

static void *worker(void *unused) {
  (void)unused;
  while (1) {
    pthread_mutex_lock(&lock);
    while (job < 0)
      pthread_cond_wait(&work, &lock);
    const int index = job;
    job = -1;
    pthread_mutex_unlock(&lock);
    do_job(index);
    pthread_mutex_lock(&lock);
    pending = 0;
    pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons(atoi(argv[1])),
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
  while ((got = read(client, line, sizeof line - 1)) > 0) {
    line[got] = '\0';
    if (strncmp(line, "ADD ", 4) != 0) {
      explicit_bzero(line, sizeof line);
      continue;
    }
    pthread_mutex_lock(&lock);
    job = line[4] == 'b' ? 1 : 0;
    pending = 1;
    pthread_cond_signal(&work);
    while (pending > 0)
      pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
    /* The last message is no state of the server's. */
    explicit_bzero(line, sizeof line);
  }
  return 0;
}
