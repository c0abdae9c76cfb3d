/* queue.c: where a request waits between threads: the queue of each
 * database's worker, and the done queue back to the loop thread (see
 * store_int.h for who owns a request when).
 *
 * A request's places (exactly one at a time):
 *
 *   loop: decoded --mb_store_enqueue(db)--> queued at db's worker
 *   worker: executing --ops.c returns db'--> queued at db' (mb_store_enqueue)
 *           executing --ops.c returns 0--> mb_req_release (token dropped)
 *   waiting for async commits: each commit callback mb_req_release
 *   pending reaches 0 --> done queue --done_async--> loop: reply (net.c)
 */
#include "config.h"

#include "store/loop.h"
#include "store/store_int.h"

void mb_store_enqueue(struct mb_store *st, int db, struct req *r)
{
	struct dbw *w = &st->w[db - 1];
	r->next = NULL;
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = r;
	else
		w->head = r;
	w->tail = r;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void mb_req_release(struct req *r)
{
	if (atomic_fetch_sub(&r->pending, 1) != 1)
		return;
	struct mb_store *st = r->st;
	struct loop_state *ls = st->loop_state;
	r->next = NULL;
	pthread_mutex_lock(&st->done_mu);
	if (st->done_tail)
		st->done_tail->next = r;
	else
		st->done_head = r;
	st->done_tail = r;
	pthread_mutex_unlock(&st->done_mu);
	uv_async_send(&ls->done_async);
}
