/* workers.h: the database owner threads (workers.c), for the server's
 * lifecycle (server.c) and the storage groups' recovery (groups.c).
 */
#ifndef MB_STORE_WORKERS_H
#define MB_STORE_WORKERS_H

#include <stdbool.h>

struct mb_store;

/* start one thread per database (after its database is open) */
void mb__workers_start(struct mb_store *st);
/* let every worker finish its queue, then join them */
void mb__workers_stop(struct mb_store *st);
/* Loop side: every worker stops between two requests.  False (and
 * resumed) when one is still busy after 2 s: try again later. */
bool mb__workers_pause(struct mb_store *st);
void mb__workers_resume(struct mb_store *st);

#endif
