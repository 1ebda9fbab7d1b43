/* privsep DIR PORT: starts as exim4 does. A child process drops to
 * nobody (uid and gid 65534), opens DIR/log for appending as that user and
 * passes the descriptor to its parent over a socketpair (SCM_RIGHTS); the
 * parent waits for it by its pid, then starts a second child that only
 * exits and waits for that one by its pid too, while the first is reaped.
 * Then it serves one client at a time: each message is appended to the
 * log and answered "ok N\n"; cmc_state[0] counts the messages.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned char cmc_state[1];

enum { kNobody = 65534 };

/* One byte and room for one descriptor (SCM_RIGHTS), as sent and received. */
struct passed {
  char byte;
  struct iovec data;
  char control[CMSG_SPACE(sizeof(int))];
  struct msghdr message;
};

static void prepare(struct passed *passed) {
  memset(passed, 0, sizeof *passed);
  passed->byte = 'L';
  passed->data = (struct iovec){&passed->byte, 1};
  passed->message = (struct msghdr){.msg_iov = &passed->data,
                                    .msg_iovlen = 1,
                                    .msg_control = passed->control,
                                    .msg_controllen = sizeof passed->control};
}

/* In the child: the log opened as nobody, sent to the parent. */
static void open_as_nobody(const char *dir, int to_parent) {
  char path[512];
  snprintf(path, sizeof path, "%s/log", dir);
  if (setgid(kNobody) != 0 || setuid(kNobody) != 0)
    _exit(2);
  const int log = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (log < 0) {
    perror("privsep: open the log as nobody");
    _exit(3);
  }
  struct passed passed;
  prepare(&passed);
  struct cmsghdr *header = CMSG_FIRSTHDR(&passed.message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(header), &log, sizeof log);
  _exit(sendmsg(to_parent, &passed.message, 0) == 1 ? 0 : 4);
}

/* The descriptor a child sent, -1 when none came. */
static int receive_descriptor(int from_child) {
  struct passed passed;
  prepare(&passed);
  if (recvmsg(from_child, &passed.message, 0) != 1)
    return -1;
  const struct cmsghdr *header = CMSG_FIRSTHDR(&passed.message);
  int fd = -1;
  if (header != NULL && header->cmsg_type == SCM_RIGHTS)
    memcpy(&fd, CMSG_DATA(header), sizeof fd);
  return fd;
}

static int child_log(const char *dir) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0)
    return -1;
  const pid_t opener = fork();
  if (opener == 0) {
    close(pair[0]);
    open_as_nobody(dir, pair[1]);
  }
  close(pair[1]);
  const int log = receive_descriptor(pair[0]);
  close(pair[0]);
  int status = 0;
  const pid_t idle = fork();
  if (idle == 0)
    _exit(0);
  if (waitpid(idle, &status, 0) != idle ||
      waitpid(opener, &status, 0) != opener || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    return -1;
  return log;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: privsep DIR PORT\n");
    return 2;
  }
  const int log = child_log(argv[1]);
  if (log < 0) {
    fprintf(stderr, "privsep: no log from the child\n");
    return 1;
  }
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port =
                                    htons((unsigned short)atoi(argv[2])),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(server, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(server, 4) != 0)
    return 1;
  for (;;) {
    const int client = accept(server, NULL, NULL);
    char text[256];
    ssize_t got;
    while ((got = read(client, text, sizeof text)) > 0) {
      if (write(log, text, (size_t)got) != got)
        return 1;
      cmc_state[0]++;
      char reply[32];
      const int length = snprintf(reply, sizeof reply, "ok %u\n", cmc_state[0]);
      if (write(client, reply, (size_t)length) != length)
        break;
    }
    close(client);
  }
}
