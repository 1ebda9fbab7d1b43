/*
 * cmc/property.h: the C ABI of cmc's property plugins (cmc check --property
 * FILE.so, cmc replay --property FILE.so).
 *
 * A plugin is a shared object that defines one `struct cmc_property`
 * through CMC_PROPERTY. For each new transition of the search, cmc calls its
 * check function with the whole path from the initial state to the state
 * after the transition: per step, which client did what, the bytes every
 * client received during the step, and the declared regions before and
 * after it. The function returns 0 when the path is fine, or writes a one
 * line description into violation (at most violation_size bytes, NUL
 * included; cmc truncates longer text) and returns 1.
 *
 * With dedup, a state is expanded from the first path that reached it (a
 * shortest one): a property over the history is checked on that path only,
 * not on every path into the state, the usual caveat of stateful checking.
 * Make what the history decides part of the state (--region) or search
 * without regions (each path its own state) where that matters.
 *
 * check is called from one thread at a time, but not always the same one,
 * and must not keep pointers into the path after it returns. All pointers
 * are valid for the duration of the call only. The plugin runs in a process
 * of cmc's own, not in cmc; several such processes may run it at once, each
 * with its own globals, each seeing some of the paths. A call has cmc's step
 * timeout to return; a plugin that crashes, exits or takes longer ends the
 * check (exit 3).
 *
 * Versioning: cmc refuses a plugin whose abi differs from its own
 * CMC_PROPERTY_ABI. A change of any structure below bumps it.
 */
#ifndef CMC_PROPERTY_H
#define CMC_PROPERTY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CMC_PROPERTY_ABI 2

/* Bytes that are not NUL-terminated. */
struct cmc_bytes {
  const unsigned char *data;
  size_t size;
};

enum cmc_step_kind {
  CMC_STEP_SEND = 0,       /* client sent message */
  CMC_STEP_DISCONNECT = 1, /* client closed its connection */
  CMC_STEP_TICK = 2,       /* the virtual clock advanced (--tick) */
  CMC_STEP_CRASH = 3,      /* the target crashed and restarted (--crash) */
};

/* A declared region: where its bytes lie in before and after. */
struct cmc_region {
  const char *name; /* as given to --region: "cmc_state", ".bss" */
  size_t offset;
  size_t size;
};

struct cmc_step {
  enum cmc_step_kind kind;
  size_t client; /* index into cmc_path.clients; 0 for a tick or crash */
  struct cmc_bytes message; /* the bytes sent (CMC_STEP_SEND), else empty */
  /* What this step's client received during the step (empty for a tick
   * or crash),
   * and received[c] what client c received (cmc_path.client_count). */
  struct cmc_bytes response;
  const struct cmc_bytes *received;
  /* The regions before and after the step, laid out by cmc_path.regions. */
  struct cmc_bytes before;
  struct cmc_bytes after;
};

struct cmc_path {
  /* The clients' names (--client), in order; one client named "" without
   * --client. */
  size_t client_count;
  const char *const *clients;
  size_t region_count;
  const struct cmc_region *regions;
  /* The steps from the initial state, the new transition last. */
  size_t step_count;
  const struct cmc_step *steps;
};

typedef int (*cmc_check_fn)(const struct cmc_path *path, char *violation,
                            size_t violation_size);

struct cmc_property {
  unsigned abi; /* CMC_PROPERTY_ABI when the plugin was built */
  const char *name;
  cmc_check_fn check;
};

#ifdef __cplusplus
}
#define CMC_PROPERTY_LINKAGE extern "C"
#else
#define CMC_PROPERTY_LINKAGE
#endif

/* Defines the plugin's property, at file scope:
 *   CMC_PROPERTY("lock-grant", check_grant);
 * cmc looks the symbol cmc_property up when it loads the plugin. */
#define CMC_PROPERTY(NAME, CHECK)                                              \
  CMC_PROPERTY_LINKAGE __attribute__((visibility("default")))                  \
  const struct cmc_property cmc_property = {CMC_PROPERTY_ABI, (NAME), (CHECK)}

#endif /* CMC_PROPERTY_H */
