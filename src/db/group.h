/* group.h: a storage group's state, shared by the engine's files that work
 * on the group as a whole (group.c opens and closes it, pager.c keeps its
 * list of databases, txn.c reads the redo point, recover.c checkpoints and
 * replays).  Not for callers outside src/db and its tests.
 *
 * Locks: lock guards the database list (and a database's cache file while
 * it is swapped); ckpt_lock serialises checkpoints; cklock/ckcond wake the
 * checkpointer thread.
 */
#ifndef MB_DB_GROUP_H
#define MB_DB_GROUP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "db/db.h"

struct mb_log;

struct mb_sg {
	char *dir, *log_dir;
	struct mb_io *io;
	bool own_io;
	struct mb_cache *cache;
	bool own_cache;
	struct mb_log *log;
	int lockfd;
	bool direct;
	pthread_mutex_t lock; /* dbs list */
	struct mb_db *dbs;
	pthread_mutex_t ckpt_lock;
	_Atomic uint64_t redo_started; /* redo point of the newest checkpoint begun */
	pthread_t ckthr;
	pthread_mutex_t cklock;
	pthread_cond_t ckcond;
	bool ckstop, ckwant, ckstarted;
	uint64_t recovered;
	/* a database closed with pages it could not write: its changes exist only
	 * in the log, so no later checkpoint may move the redo point past them */
	_Atomic int ckpt_block;
};

/* group internals used by check.c */
struct mb_log *sg_log(struct mb_sg *sg);
const char *sg_dir(struct mb_sg *sg);
int sg_for_each_db(struct mb_sg *sg, int (*fn)(void *arg, struct mb_db *db), void *arg);

#endif
