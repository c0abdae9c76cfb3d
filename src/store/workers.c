/* workers.c: one owner thread per database: each takes requests from its
 * queue (queue.c) and runs them (ops.c), which either finishes a request
 * or names the database it must move to; between requests, its search pass
 * (the database's search queue, store/schema.h "search folders"); and the
 * pause of every worker between two requests (a storage group's recovery in
 * place, groups.c).
 *
 * A worker:
 *
 *   waiting --request queued--> executing --ops done / moved--> waiting
 *      |  ^  \
 *      |  |   +--no request, queue entries, no step in flight--> search step
 *      |  |        (one entry, one transaction, committed async) --> waiting
 *      |  +--resumed-- paused <--pause set (between requests)-- waiting
 *      +--stop set and queue empty--> (its step's commit done) exited
 *                                       (joined by mb__workers_stop)
 *
 * Requests always go first: a step is taken only with no request queued,
 * and at most one step per database is in flight, so the pass uses the
 * database's idle time and the log writes it adds are its own (each
 * step's commit is durable, like every commit of the store; others may
 * share its log write by group commit).  A step that cannot run (the group
 * is in the ERROR state) stops the pass until a change queues an entry
 * again or the group is reopened.
 */
#include "config.h"

#include "store/store_int.h"
#include "store/workers.h"

#include <time.h>

/* Worker side of a pause: wait, between requests, until resumed. */
static void pause_wait(struct mb_store *st)
{
	pthread_mutex_lock(&st->pause_mu);
	st->paused++;
	pthread_cond_broadcast(&st->pause_cv);
	while (atomic_load(&st->pause))
		pthread_cond_wait(&st->pause_cv, &st->pause_mu);
	st->paused--;
	pthread_mutex_unlock(&st->pause_mu);
}

/* Loop side: every worker stops between two requests (a request queued or
 * waiting for a commit stays where it is).  A worker starved of cache
 * frames fails its request at once meanwhile (mb_cache_interrupt): the
 * dirty pages of a group in the ERROR state cannot be written until the
 * group is reopened, so waiting for a frame could hold the pause off for
 * as long as the group is out.  False (and resumed) when one is still busy
 * after 2 s: the caller tries again later instead of blocking the loop. */
bool mb__workers_pause(struct mb_store *st)
{
	atomic_store(&st->pause, true);
	/* a worker starved of cache frames fails its request and pauses */
	mb_cache_interrupt(st->cache, true);
	for (int d = 0; d < st->ndb; d++) {
		pthread_mutex_lock(&st->w[d].mu);
		pthread_cond_signal(&st->w[d].cv);
		pthread_mutex_unlock(&st->w[d].mu);
	}
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&st->pause_mu);
	int rc = 0;
	while (st->paused < st->ndb && rc == 0)
		rc = pthread_cond_timedwait(&st->pause_cv, &st->pause_mu, &until);
	bool all = st->paused == st->ndb;
	pthread_mutex_unlock(&st->pause_mu);
	if (!all)
		mb__workers_resume(st);
	else /* the recovery that follows waits for frames as it must */
		mb_cache_interrupt(st->cache, false);
	return all;
}

void mb__workers_resume(struct mb_store *st)
{
	mb_cache_interrupt(st->cache, false);
	pthread_mutex_lock(&st->pause_mu);
	atomic_store(&st->pause, false);
	pthread_cond_broadcast(&st->pause_cv);
	pthread_mutex_unlock(&st->pause_mu);
}

/* Commit callback of a search step (the log writer's thread). */
static void search_committed(void *arg, int status)
{
	struct dbw *w = arg;
	struct mb_store *st = w->st;
	if (status) {
		atomic_fetch_add(&st->c.commit_errors, 1);
	} else {
		atomic_fetch_add(&st->c.commits, 1);
		atomic_fetch_add(&st->c.search_done, 1);
	}
	pthread_mutex_lock(&w->mu);
	w->search_inflight = false;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Under w->mu: may a search step start? */
static bool search_ready(struct dbw *w)
{
	return !w->search_inflight && w->schema && mb_schema_search_pending(w->schema);
}

/* One search step: one queued entry evaluated in a transaction of its own. */
static void search_step(struct dbw *w)
{
	bool did = false;
	int rc = mb_db_begin(w->db);
	if (rc) {
		mb_schema_search_pause(w->schema);
		return;
	}
	rc = mb_schema_search_step(w->schema, &did);
	if (rc || !did) {
		mb_db_abort(w->db);
		if (rc)
			mb_schema_search_pause(w->schema);
		return;
	}
	pthread_mutex_lock(&w->mu);
	w->search_inflight = true;
	pthread_mutex_unlock(&w->mu);
	rc = mb_db_commit_async(w->db, search_committed, w);
	if (rc) { /* the callback will not run */
		pthread_mutex_lock(&w->mu);
		w->search_inflight = false;
		pthread_mutex_unlock(&w->mu);
		atomic_fetch_add(&w->st->c.commit_errors, 1);
		mb_schema_search_pause(w->schema);
	}
}

static void *worker_main(void *arg)
{
	struct dbw *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head && !w->stop && !atomic_load(&w->st->pause) && !search_ready(w))
			pthread_cond_wait(&w->cv, &w->mu);
		if (atomic_load(&w->st->pause)) {
			pthread_mutex_unlock(&w->mu);
			pause_wait(w->st);
			continue;
		}
		struct req *r = w->head;
		if (!r && !w->stop) {
			pthread_mutex_unlock(&w->mu);
			search_step(w);
			continue;
		}
		if (!r) {
			/* the callback of a step in flight still uses w */
			while (w->search_inflight)
				pthread_cond_wait(&w->cv, &w->mu);
			pthread_mutex_unlock(&w->mu);
			break;
		}
		w->head = r->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		int next = mb_ops_execute(w, r);
		if (next) {
			r->cur_db = next;
			mb_store_enqueue(w->st, next, r);
		} else {
			mb_req_release(r);
		}
	}
	return NULL;
}

void mb__workers_start(struct mb_store *st)
{
	for (int d = 0; d < st->ndb; d++)
		pthread_create(&st->w[d].th, NULL, worker_main, &st->w[d]);
}

void mb__workers_stop(struct mb_store *st)
{
	for (int d = 0; d < st->ndb; d++) {
		struct dbw *w = &st->w[d];
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	for (int d = 0; d < st->ndb; d++)
		pthread_join(st->w[d].th, NULL);
}
