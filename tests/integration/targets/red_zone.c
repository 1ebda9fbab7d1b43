/* A server whose inline-asm leaf keeps data in its red zone across the
 * system call it waits in: before each read(2) it moves the first byte of
 * the last message from its buffer to 8 bytes below its stack pointer
 * (and clears the buffer), and after the call it reads that byte back and
 * returns it, which the reply names. So the byte is only in the red zone
 * while the server waits, and what it says to the next message depends
 * on it: states that differ there alone are different states.
 * `red_zone dead PORT` leaves the byte there unread: then the states
 * after any message are the initial one.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct kept {
  long length;
  long mark;
};

/* read(fd, buffer, size), keeping buffer[0] of before the call in the red
 * zone and returning it in mark (or 0, in wait_dropping). */
struct kept wait_keeping(int fd, char *buffer, long size);
struct kept wait_dropping(int fd, char *buffer, long size);

#define WAIT_BODY                                                              \
  "movzbl (%rsi), %eax\n"                                                      \
  "mov %rax, -8(%rsp)\n"                                                       \
  "movq $0, (%rsi)\n"                                                          \
  "xor %eax, %eax\n"                                                           \
  "syscall\n"

__asm__(".text\n"
        ".globl wait_keeping\n"
        ".type wait_keeping, @function\n"
        "wait_keeping:\n" WAIT_BODY "mov -8(%rsp), %rdx\n"
        "ret\n"
        ".size wait_keeping, .-wait_keeping\n"
        ".globl wait_dropping\n"
        ".type wait_dropping, @function\n"
        "wait_dropping:\n" WAIT_BODY "xor %edx, %edx\n"
        "ret\n"
        ".size wait_dropping, .-wait_dropping\n");

static char buffer[64];
static char reply[2];

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s keep|dead PORT\n", argv[0]);
    return 2;
  }
  const int keep = strcmp(argv[1], "keep") == 0;
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
    perror("red_zone: listen");
    return 1;
  }
  const int client = accept(listener, NULL, NULL);
  for (;;) {
    const struct kept kept = keep
                                 ? wait_keeping(client, buffer, sizeof buffer)
                                 : wait_dropping(client, buffer, sizeof buffer);
    if (kept.length <= 0)
      break;
    reply[0] = (char)(kept.mark != 0 ? kept.mark : '-');
    reply[1] = '\n';
    if (write(client, reply, sizeof reply) != sizeof reply)
      break;
    explicit_bzero(reply, sizeof reply);
  }
  return 0;
}
