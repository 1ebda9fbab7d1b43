// A known call chain for the backtrace tests: main -> outer -> inner, then
// main -> inner; inner calls listen, which the seccomp filter stops on.
// Built -O0 with noinline so every function keeps its own frame.
#include <sys/socket.h>

__attribute__((noinline)) int inner(int fd) { return listen(fd, 1); }

__attribute__((noinline)) int outer(int fd) { return inner(fd) + 1; }

int main(void) {
  const int first = outer(-1);
  const int second = inner(-2);
  return first == 0 && second == -1 ? 0 : 1;
}
