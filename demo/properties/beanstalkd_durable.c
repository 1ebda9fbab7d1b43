/* beanstalkd_durable: a job beanstalkd acknowledged ("put" answered
 * "INSERTED id") is there for "peek id" until it is deleted ("delete id"
 * answered "DELETED"), crashes (--crash) included: with a binlog (-b) and
 * its fsync (-f), a crash loses no acknowledged job.
 *
 *   cmc check --crash --property build/demo/properties/beanstalkd_durable.so
 *     -m 'put 0 0 10 1\r\nx\r\n' -m 'peek 1\r\n' --writable binlog
 *     -- /usr/bin/beanstalkd -l 127.0.0.1 -p 11300 -b binlog -f0 */
#include <stdio.h>

#include "words.h"

enum { kJobs = 64 };

static int check_durable(const struct cmc_path *path, char *violation,
                         size_t size) {
  long id[kJobs];
  size_t at_step[kJobs];
  size_t count = 0;
  for (size_t i = 0; i < path->step_count; ++i) {
    const struct cmc_step *step = &path->steps[i];
    if (step->kind != CMC_STEP_SEND)
      continue;
    if (word_is(step->message, 0, "put") &&
        starts_with(step->response, "INSERTED ") && count < kJobs) {
      at_step[count] = i;
      id[count++] = number_at(step->response, 1);
    }
    const long named = number_at(step->message, 1);
    for (size_t k = 0; k < count; ++k) {
      if (id[k] != named)
        continue;
      if (word_is(step->message, 0, "delete") &&
          starts_with(step->response, "DELETED")) {
        id[k] = id[--count];
        at_step[k] = at_step[count];
        break;
      }
      if (word_is(step->message, 0, "peek") &&
          starts_with(step->response, "NOT_FOUND")) {
        snprintf(violation, size,
                 "step %zu: peek %ld is NOT_FOUND, a job acknowledged "
                 "(INSERTED) at step %zu",
                 i + 1, named, at_step[k] + 1);
        return 1;
      }
    }
  }
  return 0;
}

CMC_PROPERTY("beanstalkd-durable", check_durable);
