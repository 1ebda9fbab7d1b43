/* timers MODE PORT: kv (demo/kv.c) whose bug a timer's signal arms. Each
 * "SET x\n" sets cell x of cmc_state; once the timer's signal has come,
 * "SET a\n" also clears cell b (a set cell is lost). The timer is armed at
 * start for 5 s, so only a tick of the virtual clock reaches the bug; the
 * handler arms it only for the siginfo the kernel gives that timer.
 *
 * alarm:     alarm(5), SIGALRM (SI_KERNEL); the handler has no SA_RESTART:
 *            the read it interrupts fails with EINTR.
 * setitimer: setitimer(ITIMER_REAL) 5 s, every 5 s after, SIGALRM
 *            (SI_KERNEL); SA_RESTART: the read is restarted.
 * timer:     timer_create(CLOCK_MONOTONIC, SIGEV_SIGNAL SIGRTMIN, value
 *            42), timer_settime at an absolute instant 5 s on; SI_TIMER
 *            with the value.
 * cputimer:  timer_create on the thread's CPU-time clock, SIGEV_THREAD_ID
 *            to the thread itself, SIGALRM (as haproxy's watchdog);
 *            SI_TIMER.
 * sleeper:   alarm(5); the main thread blocks SIGALRM, a second thread
 *            sleeps for an hour and does not: the signal is its, and the
 *            bug is armed by its sleep ending early (EINTR) with the time
 *            left, 3590 s after a tick of 10 s, in its rem argument. (Its
 *            handler arms nothing.)
 * waiter:    alarm(5); the main thread blocks SIGALRM, a second thread
 *            waits on a condition variable for good (a futex wait with no
 *            timeout) and does not: its handler (SA_RESTART) takes the
 *            signal and the wait goes on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

unsigned char cmc_state[2];
static volatile sig_atomic_t expired;
static int expected_code;

static void on_timer(int signal, siginfo_t *info, void *context) {
  (void)signal;
  (void)context;
  if (info->si_code != expected_code)
    return;
  if (expected_code == SI_TIMER && info->si_value.sival_int != 42)
    return;
  expired = 1;
}

static void handle(int signal, int restart) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_timer;
  action.sa_flags = SA_SIGINFO | (restart ? SA_RESTART : 0);
  sigaction(signal, &action, NULL);
}

static int posix_timer(clockid_t clock, int notify, int signal, int flags,
                       time_t at) {
  struct sigevent event;
  memset(&event, 0, sizeof event);
  event.sigev_notify = notify;
  event.sigev_signo = signal;
  event.sigev_value.sival_int = 42;
  if (notify == SIGEV_THREAD_ID)
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  if (timer_create(clock, &event, &timer) != 0)
    return -1;
  struct itimerspec when;
  memset(&when, 0, sizeof when);
  when.it_value.tv_sec = at;
  return timer_settime(timer, flags, &when, NULL);
}

static void *sleep_for_an_hour(void *unused) {
  (void)unused;
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alarm_only, NULL);
  const struct timespec hour = {3600, 0};
  struct timespec left = {0, 0};
  if (nanosleep(&hour, &left) == -1 && errno == EINTR && left.tv_sec == 3590 &&
      left.tv_nsec == 0)
    expired = 1;
  for (;;)
    nanosleep(&hour, NULL);
  return NULL;
}

static void *wait_for_nothing(void *unused) {
  (void)unused;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alarm_only, NULL);
  pthread_mutex_lock(&lock);
  for (;;)
    pthread_cond_wait(&never, &lock);
  return NULL;
}

static int arm(const char *mode) {
  if (strcmp(mode, "waiter") == 0) {
    expected_code = SI_KERNEL;
    handle(SIGALRM, 1);
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm_only, NULL);
    pthread_t thread;
    if (pthread_create(&thread, NULL, wait_for_nothing, NULL) != 0)
      return -1;
    return alarm(5) == 0 ? 0 : -1;
  }
  if (strcmp(mode, "sleeper") == 0) {
    expected_code = -12345; /* no siginfo has it */
    handle(SIGALRM, 0);
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm_only, NULL);
    pthread_t thread;
    if (pthread_create(&thread, NULL, sleep_for_an_hour, NULL) != 0)
      return -1;
    return alarm(5) == 0 ? 0 : -1;
  }
  if (strcmp(mode, "alarm") == 0) {
    expected_code = SI_KERNEL;
    handle(SIGALRM, 0);
    return alarm(5) == 0 ? 0 : -1;
  }
  if (strcmp(mode, "setitimer") == 0) {
    expected_code = SI_KERNEL;
    handle(SIGALRM, 1);
    struct itimerval every = {{5, 0}, {5, 0}};
    return setitimer(ITIMER_REAL, &every, NULL);
  }
  expected_code = SI_TIMER;
  if (strcmp(mode, "timer") == 0) {
    handle(SIGRTMIN, 1);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return posix_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN, TIMER_ABSTIME,
                       now.tv_sec + 5);
  }
  if (strcmp(mode, "cputimer") == 0) {
    handle(SIGALRM, 1);
    clockid_t clock;
    if (pthread_getcpuclockid(pthread_self(), &clock) != 0)
      return -1;
    return posix_timer(clock, SIGEV_THREAD_ID, SIGALRM, 0, 5);
  }
  return -1;
}

static const char *answer(const char *line) {
  if (strncmp(line, "SET ", 4) != 0 || line[5] != '\0' || line[4] < 'a' ||
      line[4] > 'b')
    return "ERR\n";
  const int cell = line[4] - 'a';
  cmc_state[cell] = 1;
  if (cell == 0 && expired)
    cmc_state[1] = 0;
  return "OK\n";
}

/* Serves one client until it hangs up; a read the signal interrupts is
 * made again. */
static void serve(int client) {
  char buffer[256];
  size_t used = 0;
  for (;;) {
    const ssize_t got = read(client, buffer + used, sizeof buffer - 1 - used);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return;
    used += (size_t)got;
    buffer[used] = '\0';
    char *newline;
    while ((newline = strchr(buffer, '\n')) != NULL) {
      *newline = '\0';
      const char *reply = answer(buffer);
      if (write(client, reply, strlen(reply)) < 0)
        return;
      used -= (size_t)(newline + 1 - buffer);
      memmove(buffer, newline + 1, used + 1);
    }
    if (used == sizeof buffer - 1)
      used = 0;
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fputs("usage: timers alarm|setitimer|timer|cputimer|sleeper|waiter PORT\n",
          stderr);
    return 2;
  }
  if (arm(argv[1]) != 0) {
    perror("timers: arm");
    return 1;
  }
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[2]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listener < 0 ||
      bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 16) != 0) {
    perror("timers: listen");
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
