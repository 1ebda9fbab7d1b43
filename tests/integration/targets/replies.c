/* replies MODE PORT: a server of one client at a time, for cmc's tests of
 * what belongs to a step. cmc_state[0] counts the messages handled.
 *
 * split: answers each message with two small writes, "ok N\n" then
 *        "late N\n", without TCP_NODELAY: Linux holds the second back
 *        until the first is acknowledged (Nagle's algorithm).
 * close: answers "bye N\n" and closes the connection, then accepts again.
 * sleep: accepts, then sleeps for an hour before it reads anything.
 * penalty: sleeps a second after each read before it reads again (as
 *        ngircd delays a client's commands): what arrives meanwhile waits
 *        in the socket for the next read, which takes all of it; answers
 *        "read N\n", N the bytes that read got.
 * options: sets options on each connection it accepts (TCP_NODELAY,
 *        SO_KEEPALIVE, TCP_KEEPIDLE 77, SO_RCVBUF 20000, IP_TOS 0x10) and
 *        answers each message with what getsockopt reads of them:
 *        "opts N nodelay 1 keepalive 1 idle 77 rcvbuf 40000 tos 16\n".
 * hangup: closes each connection as it accepts it, reading nothing (as
 *        rinetd does when its backend refuses); cmc_state[0] counts them.
 * tcpinfo: keeps what getsockopt(TCP_INFO) says of the connection at each
 *        message (its round-trip time, how long ago data came, its state),
 *        as exim4 does, and answers "info N\n".
 * whoami: keeps its pid and working directory from the start, as servers
 *        that write pid files or log paths do, and answers each message
 *        with them: "who N pid P cwd DIR\n".
 */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

unsigned char cmc_state[1];
static pid_t started_as;
static char started_in[256];

static int listen_on(int port) {
  int server = socket(AF_INET, SOCK_STREAM, 0);
  int on = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(server, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(server, 8) != 0) {
    perror("replies: listen");
    exit(1);
  }
  return server;
}

static void say(int client, const char *word) {
  char line[32];
  int length = snprintf(line, sizeof line, "%s %u\n", word, cmc_state[0]);
  if (write(client, line, (size_t)length) != length)
    exit(1);
}

static int option(int client, int level, int name) {
  int value = -1;
  socklen_t length = sizeof value;
  getsockopt(client, level, name, &value, &length);
  return value;
}

static void set_options(int client) {
  const int on = 1;
  const int idle = 77;
  const int buffer = 20000;
  const int tos = 0x10;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(client, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(client, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(client, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  setsockopt(client, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
}

static void say_options(int client) {
  char line[128];
  int length = snprintf(line, sizeof line,
                        "opts %u nodelay %d keepalive %d idle %d rcvbuf %d "
                        "tos %d\n",
                        cmc_state[0], option(client, IPPROTO_TCP, TCP_NODELAY),
                        option(client, SOL_SOCKET, SO_KEEPALIVE),
                        option(client, IPPROTO_TCP, TCP_KEEPIDLE),
                        option(client, SOL_SOCKET, SO_RCVBUF),
                        option(client, IPPROTO_IP, IP_TOS));
  if (write(client, line, (size_t)length) != length)
    exit(1);
}

/* Round-trip time, time since the last data, TCP state: per message. */
static unsigned int tcp_times[3];

static void keep_tcp_info(int client) {
  struct tcp_info info;
  socklen_t length = sizeof info;
  if (getsockopt(client, IPPROTO_TCP, TCP_INFO, &info, &length) != 0)
    exit(1);
  tcp_times[0] = info.tcpi_rtt;
  tcp_times[1] = info.tcpi_last_data_recv;
  tcp_times[2] = info.tcpi_state;
}

static void say_who(int client) {
  char line[320];
  int length = snprintf(line, sizeof line, "who %u pid %d cwd %s\n",
                        cmc_state[0], (int)started_as, started_in);
  if (write(client, line, (size_t)length) != length)
    exit(1);
}

/* Answers one message as mode says; 0 when the connection ends. */
static int answer(const char *mode, int client, ssize_t got) {
  if (strcmp(mode, "penalty") == 0) {
    char line[32];
    int length = snprintf(line, sizeof line, "read %zd\n", got);
    if (write(client, line, (size_t)length) != length)
      exit(1);
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
  } else if (strcmp(mode, "options") == 0) {
    say_options(client);
  } else if (strcmp(mode, "whoami") == 0) {
    say_who(client);
  } else if (strcmp(mode, "tcpinfo") == 0) {
    keep_tcp_info(client);
    say(client, "info");
  } else if (strcmp(mode, "close") == 0) {
    say(client, "bye");
    return 0;
  } else {
    say(client, "ok");
    say(client, "late");
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fputs("usage: replies split|close|sleep|penalty|options|hangup|whoami|"
          "tcpinfo PORT\n",
          stderr);
    return 2;
  }
  const char *mode = argv[1];
  started_as = getpid();
  if (getcwd(started_in, sizeof started_in) == NULL)
    return 1;
  int server = listen_on(atoi(argv[2]));
  for (;;) {
    int client = accept(server, NULL, NULL);
    if (client < 0)
      return 1;
    if (strcmp(mode, "hangup") == 0) {
      ++cmc_state[0];
      close(client);
      continue;
    }
    if (strcmp(mode, "options") == 0)
      set_options(client);
    if (strcmp(mode, "sleep") == 0) {
      struct timespec hour = {3600, 0};
      nanosleep(&hour, NULL);
    }
    char buffer[256];
    ssize_t got;
    while ((got = read(client, buffer, sizeof buffer)) > 0) {
      ++cmc_state[0];
      if (!answer(mode, client, got))
        break;
    }
    close(client);
  }
}
