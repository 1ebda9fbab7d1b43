/* syscall_loop: reads /dev/zero forever, one byte at a time. Every read is
 * trapped by cmc's seccomp filter: the bench's one-stop round trip. */
#include <fcntl.h>
#include <unistd.h>

int main(void) {
  const int fd = open("/dev/zero", O_RDONLY);
  char byte;
  while (read(fd, &byte, 1) == 1) {
  }
  return 0;
}
