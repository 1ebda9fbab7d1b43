/* asm_kv: the kv demo's protocol and region, but the connection's reads and
 * writes are inline-asm syscall instructions in asm_read and asm_write, not
 * calls of libc's read and write. Built -static-pie, so cmc scan finds these
 * two inline sites among the static libc's.
 *
 * usage: asm_kv PORT
 * Protocol: one line per message, "SET a\n" or "SET b\n"; the reply is
 * "OK\n" ("ERR\n" for any other line). The cells are
 * unsigned char cmc_state[2]. Built with -DBUG, "SET a" also clears cell b.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

unsigned char cmc_state[2];

/* System call number with three arguments, made by a syscall instruction
 * right after "mov $number, %eax". */
__attribute__((always_inline)) static inline long
inline_syscall(int number, long first, const void *second,
               unsigned long third) {
  long result;
  __asm__ volatile("mov %1, %%eax\n\tsyscall"
                   : "=a"(result)
                   : "i"(number), "D"(first), "S"(second), "d"(third)
                   : "rcx", "r11", "memory");
  return result;
}

/* read(2) and write(2), kept out of line so that each site has a function
 * symbol of its own. */
__attribute__((noinline)) static long asm_read(int fd, void *buffer,
                                               unsigned long size) {
  return inline_syscall(0, fd, buffer, size);
}

__attribute__((noinline)) static long asm_write(int fd, const void *buffer,
                                                unsigned long size) {
  return inline_syscall(1, fd, buffer, size);
}

/* The reply to one line (without its newline). */
static const char *apply(const char *line, size_t length) {
  if (length != 5 || memcmp(line, "SET ", 4) != 0 ||
      (line[4] != 'a' && line[4] != 'b'))
    return "ERR\n";
  cmc_state[line[4] - 'a'] = 1;
#ifdef BUG
  if (line[4] == 'a')
    cmc_state[1] = 0;
#endif
  return "OK\n";
}

/* Replies to every complete line until the client hangs up. */
static void serve(int client) {
  char buffer[256];
  size_t used = 0;
  for (;;) {
    const long got = asm_read(client, buffer + used, sizeof buffer - used);
    if (got <= 0)
      return;
    used += (size_t)got;
    size_t start = 0;
    for (size_t end = 0; end < used; ++end) {
      if (buffer[end] != '\n')
        continue;
      const char *reply = apply(buffer + start, end - start);
      if (asm_write(client, reply, strlen(reply)) < 0)
        return;
      start = end + 1;
    }
    used -= start;
    memmove(buffer, buffer + start, used);
    if (used == sizeof buffer)
      used = 0; /* an overlong line is dropped */
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  const struct sockaddr_in address = {
      .sin_family = AF_INET,
      .sin_port = htons((unsigned short)atoi(argv[1])),
      .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
  };
  const int on = 1;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0 ||
      setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(listener, (const struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 16) != 0) {
    perror("asm_kv: listen");
    return 1;
  }
  for (;;) {
    const int client = accept(listener, NULL, NULL);
    if (client >= 0) {
      serve(client);
      close(client);
    }
  }
}
