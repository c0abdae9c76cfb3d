/* engine.c: loop shards, their threads, and measurement publishing (see
 * engine.h).  Invariant: a shard's users, buffers and measurement set are
 * touched only by its loop thread; the published set is shared under the
 * shard's mutex; the engine's shared settings are read-only once created. */
#include "load/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/content.h"
#include "core/error.h"
#include "load/user.h"

#define TICK_MS 20       /* loop-lag probe: 50 samples a second */
#define PUBLISH_TICKS 10 /* publish measurements every 200 ms */
#define ARENA_BYTES (4u << 20)
#define RX_BYTES (256u << 10)
#define SYNC_PERIOD_SIM_S 600.0 /* cached mode: background sync every 10 simulated minutes */

struct mb_engine {
	struct mb_engine_shared shared;
	struct mb_shard *shards;
	int nshards;
	bool started;
	uint64_t stop_ns;                 /* when stop was asked (0: running) */
};

const struct mb_engine_shared *mb_shard_shared(const struct mb_shard *sh)
{
	return &sh->eng->shared;
}

size_t mb_engine_user_struct_bytes(void)
{
	return sizeof(struct mb_user);
}

static uint32_t name_hash(const char *p, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static int build_name_index(struct mb_engine_shared *es)
{
	int n = mb_topology_user_count(es->topo);
	uint32_t cap = 16;
	while (cap < (uint32_t)n * 2)
		cap <<= 1;
	es->name_index = malloc(cap * sizeof(int32_t));
	if (!es->name_index)
		return MB_ENOMEM;
	memset(es->name_index, 0xff, cap * sizeof(int32_t));
	es->name_cap = cap;
	for (int i = 0; i < n; i++) {
		const char *name = mb_topology_user(es->topo, i)->name;
		uint32_t k = name_hash(name, strlen(name)) & (cap - 1);
		while (es->name_index[k] >= 0)
			k = (k + 1) & (cap - 1);
		es->name_index[k] = i;
	}
	return 0;
}

int32_t mb_engine_find_user(const struct mb_engine_shared *es, const char *name, size_t len)
{
	uint32_t k = name_hash(name, len) & (es->name_cap - 1);
	for (;;) {
		int32_t i = es->name_index[k];
		if (i < 0)
			return -1;
		const char *s = mb_topology_user(es->topo, i)->name;
		if (strlen(s) == len && memcmp(s, name, len) == 0)
			return i;
		k = (k + 1) & (es->name_cap - 1);
	}
}

static void tick_cb(uv_timer_t *t)
{
	struct mb_shard *sh = t->data;
	uint64_t now = uv_hrtime();
	uint64_t lag = now > sh->tick_expected_ns ? now - sh->tick_expected_ns : 0;
	mb_hist_record(sh->st->loop_lag, lag);
	sh->tick_expected_ns = now + (uint64_t)TICK_MS * 1000000u;
	if (++sh->ticks % PUBLISH_TICKS == 0) {
		uv_mutex_lock(&sh->mu);
		mb_load_stats_merge(sh->pub, sh->st);
		uv_mutex_unlock(&sh->mu);
		mb_load_stats_reset(sh->st);
	}
}

static void stop_cb(uv_async_t *a)
{
	struct mb_shard *sh = a->data;
	sh->stopping = true;
	for (int i = 0; i < sh->nusers; i++)
		mb_user_stop(&sh->users[i]);
	uv_timer_stop(&sh->tick);
	uv_close((uv_handle_t *)&sh->tick, NULL);
	uv_close((uv_handle_t *)&sh->stop_async, NULL);
}

static void shard_main(void *arg)
{
	struct mb_shard *sh = arg;
	const struct mb_engine_shared *es = &sh->eng->shared;
	sh->tick_expected_ns = uv_hrtime() + (uint64_t)TICK_MS * 1000000u;
	uv_timer_start(&sh->tick, tick_cb, TICK_MS, TICK_MS);
	/* logons spread evenly over the ramp, interleaved across shards */
	for (int i = 0; i < sh->nusers; i++) {
		struct mb_user *u = &sh->users[i];
		double delay = es->nusers > 1 ? es->ramp_s * (double)u->idx / es->nusers : 0;
		mb_user_begin(u, delay);
	}
	uv_run(&sh->loop, UV_RUN_DEFAULT);
}

static void shard_free(struct mb_shard *sh)
{
	if (sh->users) {
		for (int i = 0; i < sh->nusers; i++) {
			mb_replica_destroy(sh->users[i].rep);
			mb_buf_destroy(sh->users[i].rx);
			free(sh->users[i].ctx);
		}
	}
	free(sh->users);
	free(sh->rxbuf);
	free(sh->body);
	mb_arena_destroy(sh->arena);
	mb_buf_destroy(sh->scratch);
	mb_buf_destroy(sh->enc);
	mb_buf_destroy(sh->enc_tmp);
	mb_load_stats_destroy(sh->st);
	mb_load_stats_destroy(sh->pub);
}

int mb_engine_create(const struct mb_engine_opts *o, struct mb_engine **out)
{
	if (!o || !o->sc || !o->topo || !o->host || o->port <= 0 || o->port > 65535 ||
	    !(o->accel > 0) || o->threads < 1 || o->users < 1)
		return MB_EINVAL;
	if (o->users > mb_topology_user_count(o->topo))
		return MB_ERANGE;
	struct mb_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return MB_ENOMEM;
	struct mb_engine_shared *es = &e->shared;
	es->sc = o->sc;
	es->topo = o->topo;
	es->nusers = o->users;
	es->nlists = mb_topology_list_count(o->topo);
	es->ramp_s = o->ramp_s > 0 ? o->ramp_s : 0;
	es->ack_fd = o->ack_fd;
	es->compression = o->compression;
	es->notify = o->notify;
	es->cached = o->sc->mode == MB_MODE_CACHED;
	es->seed = o->seed;
	es->sync_period_s = SYNC_PERIOD_SIM_S / o->accel;
	if (es->sync_period_s < 0.5)
		es->sync_period_s = 0.5;
	const struct mb_topo_info *ti = mb_topology_info(o->topo);
	es->avg_body = (size_t)(ti->avg_message_kb > 0 ? ti->avg_message_kb : o->sc->avg_message_kb) * 1024;
	/* lists: mean size, and how many members are simulated users (a
	 * direct recipient who is also in a list on the message gets one copy) */
	double members = 0;
	int *sim = es->nlists ? calloc((size_t)es->nlists, sizeof(int)) : NULL;
	if (es->nlists && !sim) {
		free(e);
		return MB_ENOMEM;
	}
	for (int i = 0; i < es->nlists; i++) {
		const struct mb_topo_list *l = mb_topology_list(o->topo, i);
		members += l->nmembers;
		for (int m = 0; m < l->nmembers; m++)
			sim[i] += l->members[m] < (uint32_t)o->users;
	}
	double mean = es->nlists ? members / es->nlists : o->sc->dl_avg_members;
	if (!(mean > 0))
		mean = 1;
	double overlap = mb_sched_direct_in_list(sim, es->nlists, o->users);
	free(sim);
	int rc = mb_sched_params_init_pop(o->sc, o->accel, mean, overlap, &es->sp);
	if (rc == 0)
		rc = build_name_index(es);
	if (rc == 0) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&es->addr;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&es->addr;
		if (uv_ip4_addr(o->host, o->port, a4) != 0 && uv_ip6_addr(o->host, o->port, a6) != 0)
			rc = MB_EINVAL;
	}
	int n = o->threads < o->users ? o->threads : o->users;
	e->shards = rc == 0 ? calloc((size_t)n, sizeof(*e->shards)) : NULL;
	if (rc == 0 && !e->shards)
		rc = MB_ENOMEM;
	for (int s = 0; rc == 0 && s < n; s++) {
		struct mb_shard *sh = &e->shards[s];
		sh->eng = e;
		sh->id = s;
		e->nshards = s + 1;
		if (uv_loop_init(&sh->loop) != 0 || uv_mutex_init(&sh->mu) != 0) {
			rc = MB_ESYS;
			break;
		}
		uv_async_init(&sh->loop, &sh->stop_async, stop_cb);
		sh->stop_async.data = sh;
		uv_timer_init(&sh->loop, &sh->tick);
		sh->tick.data = sh;
		sh->inited = true;
		sh->rxcap = RX_BYTES;
		sh->rxbuf = malloc(sh->rxcap);
		sh->body_cap = MB_CONTENT_MAX;
		sh->body = malloc(sh->body_cap);
		if (!sh->rxbuf || !sh->body)
			rc = MB_ENOMEM;
		if (rc == 0)
			rc = mb_arena_create(ARENA_BYTES, &sh->arena);
		if (rc == 0)
			rc = mb_buf_create(64 << 10, &sh->scratch);
		if (rc == 0)
			rc = mb_buf_create(64 << 10, &sh->enc);
		if (rc == 0)
			rc = mb_buf_create(64 << 10, &sh->enc_tmp);
		if (rc == 0)
			rc = mb_load_stats_create(&sh->st);
		if (rc == 0)
			rc = mb_load_stats_create(&sh->pub);
		if (rc != 0)
			break;
		sh->nusers = o->users / n + (s < o->users % n ? 1 : 0);
		sh->users = calloc((size_t)sh->nusers, sizeof(struct mb_user));
		if (!sh->users) {
			rc = MB_ENOMEM;
			break;
		}
		for (int i = 0; i < sh->nusers; i++) {
			struct mb_user *u = &sh->users[i];
			mb_user_init(sh, u, (uint32_t)(s + i * n));
			if (es->cached && (rc = mb_replica_create(&u->rep)) != 0)
				break;
		}
	}
	if (rc != 0) {
		mb_engine_destroy(e);
		return rc;
	}
	*out = e;
	return 0;
}

int mb_engine_start(struct mb_engine *e)
{
	if (e->started)
		return MB_ESTATE;
	e->shared.t0_ns = uv_hrtime();
	e->stop_ns = 0;
	for (int s = 0; s < e->nshards; s++) {
		if (uv_thread_create(&e->shards[s].thread, shard_main, &e->shards[s]) != 0) {
			/* stop what started */
			for (int k = 0; k < s; k++) {
				uv_async_send(&e->shards[k].stop_async);
				uv_thread_join(&e->shards[k].thread);
			}
			return MB_ESYS;
		}
	}
	e->started = true;
	return 0;
}

void mb_engine_collect(struct mb_engine *e, struct mb_load_stats *dst)
{
	for (int s = 0; s < e->nshards; s++) {
		struct mb_shard *sh = &e->shards[s];
		uv_mutex_lock(&sh->mu);
		mb_load_stats_merge(dst, sh->pub);
		mb_load_stats_reset(sh->pub);
		uv_mutex_unlock(&sh->mu);
	}
}

int mb_engine_users_on(struct mb_engine *e)
{
	int n = 0;
	for (int s = 0; s < e->nshards; s++)
		n += atomic_load(&e->shards[s].users_on);
	return n;
}

double mb_engine_user_days(struct mb_engine *e)
{
	/* the users' time ends when the stop is asked: what the shutdown
	 * takes is no simulated time (no action is scheduled in it) */
	uint64_t end = e->stop_ns ? e->stop_ns : uv_hrtime();
	double now = (double)(end - e->shared.t0_ns) / 1e9, user_s = 0;
	for (int s = 0; s < e->nshards; s++)
		user_s += atomic_load(&e->shards[s].started) * now -
			  atomic_load(&e->shards[s].started_sum_s);
	return user_s > 0 ? user_s * e->shared.sp.accel / MB_SCHED_DAY_S : 0;
}

void mb_engine_stop(struct mb_engine *e)
{
	if (!e->started)
		return;
	e->stop_ns = uv_hrtime();
	for (int s = 0; s < e->nshards; s++)
		uv_async_send(&e->shards[s].stop_async);
	for (int s = 0; s < e->nshards; s++) {
		struct mb_shard *sh = &e->shards[s];
		uv_thread_join(&sh->thread);
		/* what the loop recorded after its last publish */
		uv_mutex_lock(&sh->mu);
		mb_load_stats_merge(sh->pub, sh->st);
		uv_mutex_unlock(&sh->mu);
		mb_load_stats_reset(sh->st);
	}
	e->started = false;
}

void mb_engine_destroy(struct mb_engine *e)
{
	if (!e)
		return;
	mb_engine_stop(e);
	for (int s = 0; s < e->nshards; s++) {
		struct mb_shard *sh = &e->shards[s];
		if (sh->inited) {
			/* close handles that never ran (engine not started) */
			if (!sh->stopping) {
				sh->stopping = true;
				for (int i = 0; i < sh->nusers; i++) {
					struct mb_user *u = &sh->users[i];
					if (u->sh)
						mb_user_stop(u);
				}
				uv_close((uv_handle_t *)&sh->tick, NULL);
				uv_close((uv_handle_t *)&sh->stop_async, NULL);
			}
			uv_run(&sh->loop, UV_RUN_DEFAULT);
			uv_loop_close(&sh->loop);
			uv_mutex_destroy(&sh->mu);
		}
		shard_free(sh);
	}
	free(e->shards);
	free(e->shared.name_index);
	free(e);
}
