/* groups.h: the store's storage groups and databases (groups.c), for the
 * server's lifecycle (server.c) and the loop's sweep (net.c).
 */
#ifndef MB_STORE_GROUPS_H
#define MB_STORE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

struct mb_store;
struct dbw;

/* open storage group g (1-based) into st->sgs[g - 1]; err says why not */
int mb__groups_open(struct mb_store *st, int g, char *err, size_t errlen);
/* open worker w's database and its schema */
int mb__groups_open_db(struct mb_store *st, struct dbw *w, char *err, size_t errlen);
/* report groups in the ERROR state and try their recovery in place (loop
 * thread; now in ms) */
void mb__groups_check(struct mb_store *st, uint64_t now);
/* close every database, checkpoint and close every group; *rc_out (when
 * not NULL) is the first error */
void mb__groups_close_all(struct mb_store *st, int *rc_out);

#endif
