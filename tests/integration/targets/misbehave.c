/* misbehave MODE PORT: a one-connection line server like demo/kv that
 * misbehaves the way MODE says, for cmc's tests of bad targets.
 *
 * Before listening:  exit (status 1, after a line on stderr), segv, fork (a
 * child that waits for ever), forkexec (a child that runs sleep), flood
 * (writes to stdout forever), hang (spins), pipe (waits for input on a pipe,
 * never listens). On a message:      "CRASH\n" segfaults, "QUIT\n" exits 0,
 * "SPIN\n" loops forever; "KILLPARENT\n" sends SIGKILL to its parent (cmc,
 * were cmc in its PID namespace); "SET x\n" sets a cell as in kv. Mode pid
 * keeps a value that differs per run in volatile_pid (a pid would, but
 * cmc's targets have the same pid in every run); mode stamp serves, and
 * every SET also writes stamp, a byte that differs per run (1..255, never
 * 0), from the first SET on; mode env exits 1 when it sees
 * LISTEN_FDS or NOTIFY_SOCKET; mode cwd leaves a file in its working directory,
 * and exits 1 at start when an earlier run's is there; mode stderr exits 1
 * at start when its stderr is non-blocking (as a logger that cannot lose
 * lines might check); mode serve only serves; mode peer keeps the port of
 * its client's end in peer_port (as servers that log their clients do).
 * "EXEC\n" executes this program again, serving on the next port.
 * "HANDLE\n" installs a handler of SIGUSR1 (a change only the kernel
 * keeps).
 * Mode churn: every message first starts threads that end on their own
 * (four joined, four detached, each reading the clock and taking a lock);
 * before "QUIT\n", "CRASH\n" or "SPIN\n" it also starts threads that read
 * the clock for ever, and reads it itself a while, so that the process
 * ends (or cmc kills it, hung) while its threads stop in system calls.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

unsigned char cmc_state[2];
int volatile_pid;
unsigned short peer_port;
unsigned char stamp;
static int stamping;

/* A value that differs per run: a hash of a fresh random UUID the kernel
 * makes at every read (read without the heap, which would change). */
static int per_run_value(void) {
  char uuid[36] = {0};
  const int fd = open("/proc/sys/kernel/random/uuid", O_RDONLY);
  if (fd >= 0) {
    if (read(fd, uuid, sizeof uuid) < 0)
      uuid[0] = 0;
    close(fd);
  }
  unsigned value = 0;
  for (size_t i = 0; i < sizeof uuid; ++i)
    value = value * 31 + (unsigned char)uuid[i];
  return (int)(value & 0x7fffffff);
}

static void before_listening(const char *mode) {
  if (strcmp(mode, "exit") == 0) {
    fputs("misbehave: exiting at start\n", stderr);
    exit(1);
  }
  if (strcmp(mode, "cwd") == 0) {
    static const char left[] = "left-by-an-earlier-run";
    if (access(left, F_OK) == 0)
      exit(1);
    FILE *file = fopen(left, "w");
    if (file == NULL)
      exit(1);
    fclose(file);
  }
  if (strcmp(mode, "segv") == 0)
    raise(SIGSEGV);
  if (strcmp(mode, "fork") == 0 && fork() == 0)
    pause();
  if (strcmp(mode, "forkexec") == 0 && fork() == 0)
    execl("/bin/sleep", "sleep", "1000", (char *)NULL);
  if (strcmp(mode, "flood") == 0)
    for (;;)
      puts("flooding stdout");
  if (strcmp(mode, "hang") == 0)
    for (volatile int spin = 0;; ++spin) {
    }
  if (strcmp(mode, "pipe") == 0) {
    int ends[2];
    char byte;
    if (pipe(ends) == 0)
      exit((int)read(ends[0], &byte, 1));
  }
  if (strcmp(mode, "pid") == 0)
    volatile_pid = per_run_value();
  stamping = strcmp(mode, "stamp") == 0;
  if (strcmp(mode, "stderr") == 0 && (fcntl(2, F_GETFL) & O_NONBLOCK) != 0) {
    fputs("misbehave: stderr is non-blocking\n", stdout);
    exit(1);
  }
  if (strcmp(mode, "env") == 0 &&
      (getenv("LISTEN_FDS") != NULL || getenv("NOTIFY_SOCKET") != NULL))
    exit(1);
}

static const char *self_port;

static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned churned;

static void read_clock(int times) {
  struct timespec now;
  for (int i = 0; i < times; ++i)
    clock_gettime(CLOCK_MONOTONIC, &now);
}

static void *churn_once(void *unused) {
  (void)unused;
  read_clock(3);
  pthread_mutex_lock(&churn_lock);
  ++churned;
  pthread_mutex_unlock(&churn_lock);
  return NULL;
}

static void *churn_forever(void *unused) {
  (void)unused;
  for (;;)
    read_clock(1);
  return NULL;
}

static void start_detached(void *(*body)(void *)) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, body, NULL) != 0)
    exit(1);
  pthread_detach(thread);
}

static void churn(const char *line) {
  pthread_t joined[4];
  for (int i = 0; i < 4; ++i)
    if (pthread_create(&joined[i], NULL, churn_once, NULL) != 0)
      exit(1);
  for (int i = 0; i < 4; ++i)
    start_detached(churn_once);
  for (int i = 0; i < 4; ++i)
    pthread_join(joined[i], NULL);
  if (strcmp(line, "QUIT") == 0 || strcmp(line, "CRASH") == 0 ||
      strcmp(line, "SPIN") == 0) {
    for (int i = 0; i < 4; ++i)
      start_detached(churn_forever);
    read_clock(200);
  }
}

static void on_usr1(int signal) { (void)signal; }

static void handle(const char *line) {
  if (strcmp(line, "HANDLE") == 0)
    signal(SIGUSR1, on_usr1);
  if (strcmp(line, "EXEC") == 0) {
    char port[16];
    snprintf(port, sizeof port, "%d", atoi(self_port) + 1);
    execl("/proc/self/exe", "misbehave", "serve", port, (char *)NULL);
    exit(1);
  }
  if (strcmp(line, "CRASH") == 0) {
    fprintf(stderr, "misbehave: crashing on purpose\n");
    raise(SIGSEGV);
  }
  if (strcmp(line, "QUIT") == 0)
    exit(0);
  if (strcmp(line, "KILLPARENT") == 0)
    kill(getppid(), SIGKILL);
  if (strcmp(line, "SPIN") == 0)
    for (volatile int spin = 0;; ++spin) {
    }
  if (strncmp(line, "SET ", 4) == 0 && (line[4] == 'a' || line[4] == 'b')) {
    cmc_state[line[4] - 'a'] = 1;
    if (stamping)
      stamp = (unsigned char)(1 + per_run_value() % 255);
  }
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  before_listening(argv[1]);
  self_port = argv[2];
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[2]));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0) {
    perror("misbehave: listen");
    return 1;
  }
  struct sockaddr_in peer = {0};
  socklen_t peer_length = sizeof peer;
  const int client = accept(listener, (struct sockaddr *)&peer, &peer_length);
  if (strcmp(argv[1], "peer") == 0)
    peer_port = ntohs(peer.sin_port);
  char line[64];
  size_t used = 0;
  while (read(client, line + used, 1) == 1) {
    if (line[used] != '\n' && used + 1 < sizeof line) {
      ++used;
      continue;
    }
    line[used] = '\0';
    used = 0;
    if (strcmp(argv[1], "churn") == 0)
      churn(line);
    handle(line);
    if (write(client, "OK\n", 3) != 3)
      return 1;
  }
  return 0;
}
