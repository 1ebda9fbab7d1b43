/* list_sticky: demo/heap_kv's sticky invariant, read from its replies: a
 * cell that one GET reply lists ("a=1 b=1\n") is listed by every later
 * GET reply. Send GET in the same message as each SET ("SET a\nGET\n"):
 * each step's reply then shows the list after the step, and the previous
 * step's reply the list before it, so the property is checked on every
 * transition, as --invariant sticky checks a region before and after.
 *
 *   cmc check --property build/demo/properties/list_sticky.so ... */
#include <stdio.h>

#include "words.h"

/* Whether message has a line that is exactly "GET". */
static int asks_list(struct cmc_bytes message) {
  for (size_t at = 0; at + 3 <= message.size;) {
    if (memcmp(message.data + at, "GET", 3) == 0 &&
        (at + 3 == message.size || message.data[at + 3] == '\n' ||
         message.data[at + 3] == '\r'))
      return 1;
    const unsigned char *newline =
        memchr(message.data + at, '\n', message.size - at);
    if (newline == NULL)
      return 0;
    at = (size_t)(newline - message.data) + 1;
  }
  return 0;
}

/* The cells a reply lists, one bit per letter: its words "x=1". */
static unsigned long listed(struct cmc_bytes response) {
  unsigned long cells = 0;
  char word[8];
  for (int n = 0; word_at(response, n, word, sizeof word); ++n)
    if (word[0] >= 'a' && word[0] <= 'z' && strcmp(word + 1, "=1") == 0)
      cells |= 1UL << (word[0] - 'a');
  return cells;
}

static int check_list(const struct cmc_path *path, char *violation,
                      size_t size) {
  unsigned long before = 0;
  size_t shown = 0; /* the step whose reply listed before */
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    if (step->kind != CMC_STEP_SEND || !asks_list(step->message))
      continue;
    const unsigned long now = listed(step->response);
    const unsigned long lost = before & ~now;
    if (lost != 0) {
      snprintf(violation, size,
               "step %zu: cell %c, listed after step %zu, is gone", i + 1,
               'a' + __builtin_ctzl(lost), shown);
      return 1;
    }
    before = now;
    shown = i + 1;
  }
  return 0;
}

CMC_PROPERTY("list-sticky", check_list);
