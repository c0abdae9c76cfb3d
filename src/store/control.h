/* control.h: control lines from the supervisor (control.c), for server.c. */
#ifndef MB_STORE_CONTROL_H
#define MB_STORE_CONTROL_H

struct mb_store;

/* the loop handles (net-drop timer, async) and the lock; before the loop runs */
void mb__ctl_init(struct mb_store *st);
/* start the control thread reading o.stats_fd */
void mb__ctl_start(struct mb_store *st);
/* stop and join it (no-op when not started) */
void mb__ctl_stop(struct mb_store *st);

#endif
