/* libtsc_clock.so: the time stamp counter, in a library that tsc_lease
 * loads with dlopen. */
#include <stdint.h>
#include <x86intrin.h>

uint64_t tsc_now(void) { return __rdtsc(); }
