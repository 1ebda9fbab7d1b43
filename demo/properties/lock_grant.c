/* lock_grant: demo/lock_server's lock is granted to at most one client at a
 * time. A client holds it from the "OK\n" to its LOCK until the "OK\n" to
 * its own UNLOCK, or until it disconnects. An UNLOCK by another client,
 * whatever the server answers, does not end the holder's hold: the holder
 * was never told (lock_server -DBUG breaks exactly this).
 *
 *   cmc check --property build/demo/properties/lock_grant.so ... */
#include <stdio.h>

#include "words.h"

static int check_grant(const struct cmc_path *path, char *violation,
                       size_t size) {
  long holder = -1;
  size_t granted = 0; /* the step that granted holder the lock */
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    const long client = (long)step->client;
    if (step->kind == CMC_STEP_DISCONNECT && client == holder)
      holder = -1;
    if (step->kind != CMC_STEP_SEND || !starts_with(step->response, "OK\n"))
      continue;
    if (word_is(step->message, 0, "UNLOCK") && client == holder) {
      holder = -1;
    } else if (word_is(step->message, 0, "LOCK")) {
      if (holder >= 0) {
        snprintf(violation, size,
                 "step %zu granted the lock to client %s, but client %s "
                 "holds it since step %zu",
                 i + 1, path->clients[client], path->clients[holder], granted);
        return 1;
      }
      holder = client;
      granted = i + 1;
    }
  }
  return 0;
}

CMC_PROPERTY("lock-grant", check_grant);
