/* redis_durable: a key redis acknowledged ("SET key value" answered
 * "+OK") has a value for "GET key" until a "DEL key" deletes it, crashes
 * (--crash) included: with appendonly yes and appendfsync always, a crash
 * loses no acknowledged write.
 *
 *   cmc check --crash --property build/demo/properties/redis_durable.so
 *     -m 'SET k v\r\n' -m 'GET k\r\n' -- /usr/bin/redis-server --port 6379
 *     --save '' --appendonly yes --appendfsync always */
#include <stdio.h>

#include "words.h"

enum { kKeys = 64 };

static int check_durable(const struct cmc_path *path, char *violation,
                         size_t size) {
  char key[kKeys][64];
  size_t at_step[kKeys];
  size_t count = 0;
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    char named[64];
    if (step->kind != CMC_STEP_SEND ||
        !word_at(step->message, 1, named, sizeof named))
      continue;
    size_t k = 0;
    while (k < count && strcmp(key[k], named) != 0)
      ++k;
    if (word_is(step->message, 0, "SET") &&
        starts_with(step->response, "+OK") && k == count && count < kKeys) {
      memcpy(key[count], named, sizeof named);
      at_step[count++] = i;
    } else if (k < count && word_is(step->message, 0, "DEL")) {
      memmove(key[k], key[--count], sizeof key[k]);
      at_step[k] = at_step[count];
    } else if (k < count && word_is(step->message, 0, "GET") &&
               starts_with(step->response, "$-1")) {
      snprintf(violation, size,
               "step %zu: GET %s has no value, a SET acknowledged (+OK) at "
               "step %zu",
               i + 1, named, at_step[k] + 1);
      return 1;
    }
  }
  return 0;
}

CMC_PROPERTY("redis-durable", check_durable);
