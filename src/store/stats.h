/* stats.h: the store's stats stream (stats.c), for server.c. */
#ifndef MB_STORE_STATS_H
#define MB_STORE_STATS_H

#include <uv.h>

/* stats timer (t->data is the store): one window onto the stream; the
 * server calls it once more for the last window before closing */
void mb__stats_on_timer(uv_timer_t *t);

#endif
