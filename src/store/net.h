/* net.h: the store's network side (net.c), for the server's other files.
 * Loop thread only.
 */
#ifndef MB_STORE_NET_H
#define MB_STORE_NET_H

#include <stddef.h>
#include <uv.h>

#include "store/loop.h"

/* bind and listen on o.listen_host:o.port; ls->port is the bound port */
int mb__net_listen(struct mb_store *st, char *err, size_t errlen);
/* done_async: take the done queue, reply (after a request's delay, if any) */
void mb__net_on_done(uv_async_t *a);
/* sweep timer: connection timeouts, then the storage groups' check */
void mb__net_on_sweep(uv_timer_t *t);
/* stop accepting; new requests are answered MB_EBUSY; the loop stops once
 * nothing is in flight */
void mb__net_begin_stop(struct mb_store *st);
/* after the loop stopped: finish the requests in flight, flush replies
 * briefly, close every connection */
void mb__net_drain(struct mb_store *st);
/* read from the connection again (unless it is closing or reads are dropped) */
void mb__net_start_reading(struct conn *c);
void mb__net_conn_close(struct conn *c);
/* requests in flight changed by delta (0: bring the time integral up to now) */
void mb__net_inflight_change(struct loop_state *ls, int delta);

#endif
