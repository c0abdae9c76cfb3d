/* txnmode_int.h: transactions mode's state, shared by txnmode.c (the
 * databases, the worker) and txnrec.c (checksum pass, soft recovery);
 * nothing outside src/stress. */
#ifndef MB_STRESS_TXNMODE_INT_H
#define MB_STRESS_TXNMODE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/hist.h"
#include "db/db.h"
#include "stress/txnmode.h"
#include "stress/watchvfs.h"

struct tdb {
	pthread_mutex_t mu;
	struct mb_db *db;
	struct mb_tree *tree;
	struct mb_cursor *cur;
	char path[4200];
	uint64_t keys; /* initial records: keys 0, STRIDE, 2*STRIDE, ... */
};

struct mb_txnmode {
	struct mb_txnmode_cfg cfg;
	char dir[4096];
	char log_dir[4096];
	bool has_log_dir;
	struct mb_watchvfs *watch;
	struct mb_io *io;
	struct mb_sg *sg;
	struct tdb db[MB_TXN_MAX_DBS];
	bool reused;
	/* accounting */
	struct mb_stress_slot *engine_slot; /* async commit failures */
	struct mb_hist *tmp;
	struct mb_io_stats prev;
	struct mb_cache_stats prev_cache;
	atomic_uint_fast64_t async_fail;
	uint64_t async_fail_seen;
};

/* The mode's state for cfg, nothing opened (0 or an error, msg filled). */
int mb__txn_init(const struct mb_txnmode_cfg *cfg, struct mb_txnmode **out, char *msg, size_t len);
void mb__txn_free(struct mb_txnmode *m);
/* Whether the directory holds filled test databases (ready.json). */
bool mb__txn_marker_read(struct mb_txnmode *m);
/* The storage group's options for m (create: a new group). */
void mb__txn_sg_options(const struct mb_txnmode *m, struct mb_sg_options *o, bool create);
/* Open (or create) the test databases in the open group. */
int mb__txn_open_dbs(struct mb_txnmode *m, bool create, char *msg, size_t len);

#endif
