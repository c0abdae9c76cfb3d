/* init_int.h: internal to the files of `mailbench init` (init.c: the
 * command, state and progress; init_fill.c: the workers that populate the
 * mailboxes; init_topo.c: the generated topology).  Not for other files.
 *
 * Layering: init.c -> init_fill.c (mb__init_sg_worker), init.c ->
 * init_topo.c (mb_store_gen_topology, store.h); the workers report through
 * the context's atomics only, never by calling back.
 */
#ifndef MB_STORE_INIT_INT_H
#define MB_STORE_INIT_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mix.h"
#include "core/rng.h"
#include "core/topology.h"
#include "db/db.h"

struct plan {
	int inbox, deleted, folders, per_folder, appts, contacts;
	size_t avg_body;
	int items; /* messages + appointments + contacts */
};

struct init_ctx {
	const char *data;
	struct mb_topology *topo;
	struct plan plan;
	const struct mb_mix_kind *mix; /* the scenario's message_mix.init (n 0: plain text) */
	int nmix;
	uint64_t seed;
	int64_t now_ms;
	uint32_t cache_mb;
	int page_size;
	atomic_uint_fast64_t items_done;
	atomic_uint_fast64_t bytes_done;
	atomic_int mailboxes_done;
	atomic_int failed;
	char errmsg[512];
	pthread_mutex_t lock;
	struct mb_cache *cache;
	bool no_bulk; /* --no-bulk: transactions only (the path before bulk builds) */
	const volatile sig_atomic_t
	    *stop; /* set by SIGINT/SIGTERM: stop after the current commit */
};

struct sg_job {
	struct init_ctx *ctx;
	int sg;
	pthread_t th;
};

/* init_fill.c: the thread of one storage group (arg: its struct sg_job):
 * opens the group's databases and populates each of its mailboxes, resuming
 * where the last commit ended; errors go to the context (failed, errmsg). */
void *mb__init_sg_worker(void *arg);

#endif
