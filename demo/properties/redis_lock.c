/* redis_lock: "SET lock VALUE NX" succeeds (+OK) for at most one client
 * until a "DEL lock" deletes the key (:1). The key is "lock"; messages are
 * redis inline commands ("SET lock A NX\r\n").
 *
 *   cmc check --property build/demo/properties/redis_lock.so ... */
#include <stdio.h>

#include "words.h"

static int is_set_nx(struct cmc_bytes message) {
  return word_is(message, 0, "SET") && word_is(message, 1, "lock") &&
         word_is(message, 3, "NX");
}

static int check_lock(const struct cmc_path *path, char *violation,
                      size_t size) {
  long holder = -1;
  size_t taken = 0; /* the step whose SET NX gave holder the lock */
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    if (step->kind != CMC_STEP_SEND)
      continue;
    if (word_is(step->message, 0, "DEL") && word_is(step->message, 1, "lock") &&
        starts_with(step->response, ":1\r\n"))
      holder = -1;
    if (!is_set_nx(step->message) || !starts_with(step->response, "+OK\r\n"))
      continue;
    if (holder >= 0) {
      snprintf(violation, size,
               "step %zu: SET lock NX succeeded for client %s, but client %s "
               "holds the lock since step %zu",
               i + 1, path->clients[step->client], path->clients[holder],
               taken);
      return 1;
    }
    holder = (long)step->client;
    taken = i + 1;
  }
  return 0;
}

CMC_PROPERTY("redis-lock", check_lock);
