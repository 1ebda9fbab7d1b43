/* log_durable: for demo/log_server, a line the server acknowledged
 * ("APPEND x" answered "OK") is in the reply of every later GET, crashes
 * (--crash) included.
 *
 *   cmc check --crash --property build/demo/properties/log_durable.so
 *     -m 'APPEND a\n' -m 'GET\n' -- build/demo/log_server_bug 7000 */
#include <stdio.h>

#include "words.h"

enum { kLines = 64 };

/* Whether bytes hold line + "\n" as a whole line. */
static int has_line(struct cmc_bytes bytes, const char *line) {
  const size_t length = strlen(line);
  for (size_t at = 0; at + length < bytes.size;) {
    if ((at == 0 || bytes.data[at - 1] == '\n') &&
        memcmp(bytes.data + at, line, length) == 0 &&
        bytes.data[at + length] == '\n')
      return 1;
    const unsigned char *next = memchr(bytes.data + at, '\n', bytes.size - at);
    if (next == NULL)
      return 0;
    at = (size_t)(next - bytes.data) + 1;
  }
  return 0;
}

static int check_log(const struct cmc_path *path, char *violation,
                     size_t size) {
  char acked[kLines][64];
  size_t at_step[kLines];
  size_t count = 0;
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    if (step->kind != CMC_STEP_SEND)
      continue;
    if (word_is(step->message, 0, "APPEND") &&
        starts_with(step->response, "OK\n") && count < kLines &&
        word_at(step->message, 1, acked[count], sizeof acked[count]))
      at_step[count++] = i;
    if (!word_is(step->message, 0, "GET") || !has_line(step->response, "END"))
      continue;
    for (size_t k = 0; k < count; ++k)
      if (!has_line(step->response, acked[k])) {
        snprintf(violation, size,
                 "step %zu: GET does not list '%s', acknowledged at step %zu",
                 i + 1, acked[k], at_step[k] + 1);
        return 1;
      }
  }
  return 0;
}

CMC_PROPERTY("log-durable", check_log);
