/* beanstalkd_reserve: a job is never reserved by two clients at once. A
 * client holds a job from the "RESERVED id" it received until it releases
 * (RELEASED), deletes (DELETED) or buries (BURIED) it, or disconnects,
 * which makes beanstalkd release it. A reservation may come during any
 * step (a blocked "reserve" is answered when a job arrives), so every
 * client's bytes of every step are read.
 *
 * A tick of the virtual clock may pass a job's time-to-run, after which
 * beanstalkd releases it: the property forgets every reservation at a
 * tick rather than report a false violation.
 *
 *   cmc check --property build/demo/properties/beanstalkd_reserve.so ... */
#include <stdio.h>

#include "words.h"

enum { kJobs = 64 };

/* holder[k] reserved job id[k]; k < count. */
struct reservations {
  long id[kJobs];
  size_t holder[kJobs];
  size_t count;
};

static void forget(struct reservations *held, size_t k) {
  held->id[k] = held->id[held->count - 1];
  held->holder[k] = held->holder[held->count - 1];
  --held->count;
}

static long find(const struct reservations *held, long id) {
  for (size_t k = 0; k < held->count; ++k)
    if (held->id[k] == id)
      return (long)k;
  return -1;
}

/* The next line of bytes from at, advanced past it (and past a job's body
 * after "RESERVED id bytes"); 0 when there is none. */
static int next_line(struct cmc_bytes bytes, size_t *at,
                     struct cmc_bytes *line) {
  if (*at >= bytes.size)
    return 0;
  const unsigned char *start = bytes.data + *at;
  const unsigned char *end = memchr(start, '\n', bytes.size - *at);
  line->data = start;
  line->size = end ? (size_t)(end - start) + 1 : bytes.size - *at;
  *at += line->size;
  if (starts_with(*line, "RESERVED "))
    *at += (size_t)number_at(*line, 2) + 2;
  return 1;
}

/* Records the jobs that client received in bytes; 1 (with violation
 * written) if another client holds one of them. */
static int take_reservations(struct reservations *held,
                             const struct cmc_path *path, size_t step,
                             size_t client, char *violation, size_t size) {
  struct cmc_bytes received = path->steps[step].received[client];
  struct cmc_bytes line;
  size_t at = 0;
  while (next_line(received, &at, &line)) {
    if (!starts_with(line, "RESERVED "))
      continue;
    long id = number_at(line, 1);
    long k = find(held, id);
    if (k >= 0) {
      snprintf(violation, size,
               "step %zu: job %ld reserved by client %s while client %s "
               "holds it",
               step + 1, id, path->clients[client],
               path->clients[held->holder[k]]);
      return 1;
    }
    if (held->count < kJobs) {
      held->id[held->count] = id;
      held->holder[held->count++] = client;
    }
  }
  return 0;
}

/* A release, delete or bury by the step's client that beanstalkd
 * confirmed ends its hold. */
static void give_back(struct reservations *held, const struct cmc_step *step) {
  static const char *const kEnds[][2] = {
      {"release", "RELEASED"}, {"delete", "DELETED"}, {"bury", "BURIED"}};
  for (size_t e = 0; e < sizeof kEnds / sizeof kEnds[0]; ++e) {
    if (!word_is(step->message, 0, kEnds[e][0]) ||
        !starts_with(step->response, kEnds[e][1]))
      continue;
    long k = find(held, number_at(step->message, 1));
    if (k >= 0 && held->holder[k] == step->client)
      forget(held, (size_t)k);
  }
}

static int check_reserve(const struct cmc_path *path, char *violation,
                         size_t size) {
  struct reservations held = {.count = 0};
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    if (step->kind == CMC_STEP_TICK)
      held.count = 0;
    if (step->kind == CMC_STEP_DISCONNECT)
      for (size_t k = held.count; k-- > 0;)
        if (held.holder[k] == step->client)
          forget(&held, k);
    if (step->kind == CMC_STEP_SEND)
      give_back(&held, step);
    for (size_t client = 0; client < path->client_count; ++client)
      if (take_reservations(&held, path, i, client, violation, size))
        return 1;
  }
  return 0;
}

CMC_PROPERTY("beanstalkd-reserve", check_reserve);
