/* workers.c: one owner thread per database: each takes requests from its
 * queue (queue.c) and runs them (ops.c), which either finishes a request
 * or names the database it must move to; and the pause of every worker
 * between two requests (a storage group's recovery in place, groups.c).
 *
 * A worker:
 *
 *   waiting --request queued--> executing --ops done / moved--> waiting
 *      |  ^
 *      |  +--resumed-- paused <--pause set (between requests)-- waiting
 *      +--stop set and queue empty--> exited (joined by mb__workers_stop)
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

static void *worker_main(void *arg)
{
	struct dbw *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head && !w->stop && !atomic_load(&w->st->pause))
			pthread_cond_wait(&w->cv, &w->mu);
		if (atomic_load(&w->st->pause)) {
			pthread_mutex_unlock(&w->mu);
			pause_wait(w->st);
			continue;
		}
		struct req *r = w->head;
		if (!r) {
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
