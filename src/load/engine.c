/* engine.c: loop shards, their threads, and measurement publishing (see
 * engine.h).  Invariant: a shard's users, buffers and measurement set are
 * touched only by its loop thread; the published set is shared under the
 * shard's mutex; the engine's shared settings are read-only once created. */
#include "load/engine.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "load/user.h"

#define TICK_MS 20	 /* loop-lag probe: 50 samples a second */
#define PUBLISH_TICKS 10 /* publish measurements every 200 ms */
#define RX_BYTES (256u << 10)
#define SYNC_PERIOD_SIM_S 600.0 /* cached mode: background sync every 10 simulated minutes */
/* cached mode: a new-mail notification is downloaded 30 simulated seconds
 * later (KB870926, Outlook 2003's download timer) */
#define DOWNLOAD_DELAY_SIM_S 30.0
/* cached mode: local changes are uploaded 15 simulated seconds after the
 * last one, 60 after the first at most (Outlook 2003's upload and maximum
 * timers: the Cached Mode policy's Upload and Maximum values) */
#define UPLOAD_DELAY_SIM_S 15.0
#define UPLOAD_MAX_SIM_S 60.0

struct mb_engine {
	struct mb_engine_shared shared;
	struct mb_scenario *sc; /* the scenario less what the target cannot run */
	uint32_t unsupported;	/* actions the target cannot run */
	struct mb_shard *shards;
	int nshards;
	bool started;
	uint64_t stop_ns; /* when stop was asked (0: running) */
};

size_t mb_engine_user_struct_bytes(const struct mb_engine *e)
{
	const struct mb_target_ops *ops = e ? e->shared.ops : NULL;
	size_t extra =
	    ops ? ops->user_size +
		      (ops->conns > 1 ? (size_t)(ops->conns - 1) * sizeof(struct mb_conn) : 0)
		: 0;
	return sizeof(struct mb_user) + extra;
}

const struct mb_target_ops *mb_engine_target(const struct mb_engine *e) { return e->shared.ops; }

uint32_t mb_engine_unsupported(const struct mb_engine *e) { return e->unsupported; }

/* A numeric "HOST:PORT" or "[V6]:PORT" into addr. */
static int parse_addr(const char *s, struct sockaddr_storage *addr)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return MB_EINVAL;
	char host[256];
	size_t n = (size_t)(colon - s);
	if (s[0] == '[' && colon[-1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(host))
		return MB_EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	int port = atoi(colon + 1);
	if (port < 1 || port > 65535)
		return MB_EINVAL;
	if (uv_ip4_addr(host, port, (struct sockaddr_in *)addr) != 0 &&
	    uv_ip6_addr(host, port, (struct sockaddr_in6 *)addr) != 0)
		return MB_EINVAL;
	return 0;
}

/* The host part of "HOST:PORT" or "[V6]:PORT": what the server's
 * certificate must name. */
static void tls_host(const char *s, char *host, size_t cap)
{
	const char *colon = strrchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	snprintf(host, cap, "%.*s", (int)n, s);
}

const char *mb_engine_tls_error(const struct mb_engine *e)
{
	return atomic_load(&e->shared.tls_err_state) == 2 ? e->shared.tls_err : NULL;
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
	const struct mb_engine_shared *es = sh->es;
	/* the loop's clock was read at uv_loop_init (mb_engine_create): timers
	 * started before this would count from then and fire early, shortening
	 * the ramp by however long the start took (a loaded machine) */
	uv_update_time(&sh->loop);
	sh->tick_expected_ns = uv_hrtime() + (uint64_t)TICK_MS * 1000000u;
	uv_timer_start(&sh->tick, tick_cb, TICK_MS, TICK_MS);
	/* logons spread evenly over the ramp, interleaved across shards */
	for (int i = 0; i < sh->nusers; i++) {
		struct mb_user *u = &sh->users[i];
		double delay =
		    es->count > 1
			? es->ramp_s * (double)(u->t.idx - (uint32_t)es->first) / es->count
			: 0;
		mb_user_begin(u, delay);
	}
	uv_run(&sh->loop, UV_RUN_DEFAULT);
}

static void shard_free(struct mb_shard *sh, const struct mb_target_ops *ops)
{
	if (sh->users) {
		for (int i = 0; i < sh->nusers; i++) {
			struct mb_user *u = &sh->users[i];
			if (u->sh && ops->user_fini)
				ops->user_fini(&u->t);
			mb_buf_destroy(u->c0.rx);
			for (int k = 1; u->xc && k < ops->conns; k++)
				mb_buf_destroy(u->xc[k - 1].rx);
			free(u->xc);
			free(u->bh);
		}
	}
	free(sh->users);
	mb_user_pool_free(sh);
	free(sh->priv);
	free(sh->rxbuf);
	if (ops->shard_fini && sh->drv)
		ops->shard_fini(sh->drv);
	mb_load_stats_destroy(sh->st);
	mb_load_stats_destroy(sh->pub);
}

int mb_engine_create(const struct mb_engine_opts *o, struct mb_engine **out)
{
	if (!o || !o->sc || !o->topo || !o->target || !(o->accel > 0) || o->threads < 1 ||
	    o->users < 1 || o->first < 0 || o->count < 0)
		return MB_EINVAL;
	const struct mb_target_ops *ops = o->ops ? o->ops : mb_target_find(o->target->driver);
	if (!ops || ops->conns < 1 || ops->conns > MB_TARGET_CONNS_MAX ||
	    ops->nops > MB_TARGET_OPS_MAX)
		return MB_EINVAL;
	/* A target that closes while a request is written is an EPIPE of that
	 * connection (retried by the engine), never a SIGPIPE of the process. */
	signal(SIGPIPE, SIG_IGN);
	int count = o->count ? o->count : o->users - o->first;
	if (o->users > mb_topology_user_count(o->topo) || count < 1 || o->first + count > o->users)
		return MB_ERANGE;
	struct mb_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return MB_ENOMEM;
	struct mb_engine_shared *es = &e->shared;
	es->ops = ops;
	es->cfg = *o->target;
	es->topo = o->topo;
	es->nusers = o->users;
	es->first = o->first;
	es->count = count;
	es->nlists = mb_topology_list_count(o->topo);
	es->ramp_s = o->ramp_s > 0 ? o->ramp_s : 0;
	es->ack_fd = o->ack_fd;
	es->seed = o->seed;
	/* what the target cannot run is not scheduled (and shown as such) */
	e->sc = malloc(sizeof(*e->sc));
	if (!e->sc) {
		free(e);
		return MB_ENOMEM;
	}
	*e->sc = *o->sc;
	for (int a = 0; a < MB_ACTION_COUNT; a++)
		if (!mb_target_supports(ops, a) && e->sc->actions_per_day[a] > 0) {
			e->unsupported |= 1u << a;
			e->sc->actions_per_day[a] = 0;
		}
	es->sc = e->sc;
	struct mb_target_env *env = &es->env;
	env->cfg = &es->cfg;
	env->sc = es->sc;
	env->accounts = o->topo;
	env->sp = &es->sp;
	env->nusers = o->users;
	env->nlists = es->nlists;
	env->cached = o->sc->mode == MB_MODE_CACHED && (ops->flags & MB_TARGET_F_CACHED);
	env->compression = o->compression;
	env->notify = o->notify;
	env->sync_period_s = SYNC_PERIOD_SIM_S / o->accel;
	if (env->sync_period_s < 0.5)
		env->sync_period_s = 0.5;
	env->download_delay_s = DOWNLOAD_DELAY_SIM_S / o->accel;
	env->upload_delay_s = UPLOAD_DELAY_SIM_S / o->accel;
	env->upload_max_s = UPLOAD_MAX_SIM_S / o->accel;
	const struct mb_topo_info *ti = mb_topology_info(o->topo);
	env->avg_body = (size_t)(ti->mailbox.avg_message_kb > 0 ? ti->mailbox.avg_message_kb
								: o->sc->mailbox.avg_message_kb) *
			1024;
	/* lists: mean size, and how many members are simulated users (a
	 * direct recipient who is also in a list on the message gets one copy) */
	double members = 0;
	int *sim = es->nlists ? calloc((size_t)es->nlists, sizeof(int)) : NULL;
	if (es->nlists && !sim) {
		free(e->sc);
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
	int rc = mb_sched_params_init_pop(es->sc, o->accel, mean, overlap, &es->sp);
	if (rc == 0)
		rc = mb_user_name_index(es);
	for (int i = 0; rc == 0 && !(ops->flags & MB_TARGET_F_NO_IO) && i < ops->conns; i++)
		rc = parse_addr(es->cfg.address[i], &es->addr[i]);
	for (int i = 0; rc == 0 && !(ops->flags & MB_TARGET_F_NO_IO) && i < ops->conns; i++) {
		if (es->cfg.tls[i] == MB_TLS_NONE)
			continue;
		tls_host(es->cfg.address[i], es->tls_host[i], sizeof(es->tls_host[i]));
		if (!es->tls_ctx)
			rc = mb_tls_ctx_client(es->cfg.tls_ca, es->cfg.tls_insecure, &es->tls_ctx,
					       es->tls_err, sizeof(es->tls_err));
	}
	int n = o->threads < count ? o->threads : count;
	e->shards = rc == 0 ? calloc((size_t)n, sizeof(*e->shards)) : NULL;
	if (rc == 0 && !e->shards)
		rc = MB_ENOMEM;
	for (int s = 0; rc == 0 && s < n; s++) {
		struct mb_shard *sh = &e->shards[s];
		sh->es = es;
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
		if (!sh->rxbuf)
			rc = MB_ENOMEM;
		if (rc == 0)
			rc = mb_load_stats_create(&sh->st);
		if (rc == 0)
			rc = mb_load_stats_create(&sh->pub);
		if (rc == 0)
			rc = mb_load_stats_set_ops(sh->st, ops->op_names, ops->nops);
		if (rc == 0)
			rc = mb_load_stats_set_ops(sh->pub, ops->op_names, ops->nops);
		if (rc == 0 && ops->shard_init)
			rc = ops->shard_init(env, &sh->drv);
		if (rc != 0)
			break;
		sh->benv.sp = &es->sp;
		sh->benv.nusers = (uint32_t)o->users;
		sh->benv.nlists = (uint32_t)es->nlists;
		sh->benv.cached = env->cached;
		sh->benv.inbox_messages = ti->mailbox.inbox_messages;
		sh->benv.deleted_items_messages = ti->mailbox.deleted_items_messages;
		sh->benv.contacts = ti->mailbox.contacts;
		sh->benv.avg_body = (uint32_t)env->avg_body;
		sh->benv.send_mix = es->sc->mix_send;
		sh->benv.nsend_mix = es->sc->mix_send_count;
		sh->benv.open_attach_pct = es->sc->open_attachment_pct;
		sh->benv.steps = ops->steps & MB_STEPS_OPTIONAL;
		sh->nusers = count / n + (s < count % n ? 1 : 0);
		sh->users = calloc((size_t)sh->nusers, sizeof(struct mb_user));
		if (ops->user_size)
			sh->priv = calloc((size_t)sh->nusers, ops->user_size);
		if (!sh->users || (ops->user_size && !sh->priv)) {
			rc = MB_ENOMEM;
			break;
		}
		for (int i = 0; i < sh->nusers; i++) {
			struct mb_user *u = &sh->users[i];
			if (ops->conns > 1 &&
			    !(u->xc = calloc((size_t)ops->conns - 1, sizeof(*u->xc)))) {
				rc = MB_ENOMEM;
				break;
			}
			mb_user_init(sh, u, (uint32_t)(o->first + s + i * n),
				     ops->user_size ? sh->priv + (size_t)i * ops->user_size : NULL);
			if (ops->user_init && (rc = ops->user_init(&u->t)) != 0)
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
		shard_free(sh, e->shared.ops);
	}
	free(e->shards);
	mb_tls_ctx_destroy(e->shared.tls_ctx);
	free(e->shared.name_index);
	free(e->sc);
	free(e);
}
