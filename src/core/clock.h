/* clock.h: the program's clocks, one definition each.
 *
 * Two clocks, never mixed: the monotonic clock (CLOCK_MONOTONIC) for
 * every interval, deadline and rate; the wall clock (CLOCK_REALTIME) only
 * for what is stored or shown as a date (item timestamps, "created").
 * libuv's uv_hrtime() / uv_now() read the same monotonic clock and may be
 * used inside an event loop.  Invariant: the monotonic functions never go
 * backwards within one process.
 */
#ifndef MB_CORE_CLOCK_H
#define MB_CORE_CLOCK_H

#include <stdint.h>

/* Monotonic clock in seconds, nanoseconds and milliseconds. */
double mb_now_s(void);
uint64_t mb_now_ns(void);
int64_t mb_now_ms(void);
/* Wall clock: milliseconds since the Unix epoch. */
int64_t mb_wall_ms(void);

#endif
