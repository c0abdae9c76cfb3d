/* server.c: the store server's lifecycle: create (topology, I/O layer
 * with its fault wrapper, cache, storage groups and databases, the loop,
 * its handles and the listener), run (timers, the loop, then the orderly
 * stop), destroy, and the small public accessors.  The pieces it puts
 * together: net.c (connections), queue.c and workers.c (database owner
 * threads), ops.c (operations), groups.c (storage groups), stats.c (the
 * stats stream), control.c (control lines); loop.h has the loop's state.
 *
 * Invariants:
 *  - Shutdown: stop accepting, answer new requests MB_EBUSY, wait for the
 *    in-flight ones, stop the workers, close databases, checkpoint, close.
 *  - The descriptor cap on connections is set once, at create, from
 *    RLIMIT_NOFILE (raised to its hard limit) less the descriptors open and
 *    a reserve for the storage groups.
 *
 *   created --mb_store_run--> running --signal / mb_store_stop--> stopping
 *      --in-flight done, workers joined, last stats window, groups closed-->
 *   stopped --mb_store_destroy--> freed
 */
#include "config.h"

#include "store/control.h"
#include "store/groups.h"
#include "store/loop.h"
#include "store/net.h"
#include "store/stats.h"
#include "store/workers.h"
#include "core/sig.h"
#include "core/error.h"
#include "proto/lz77.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define SWEEP_MS 1000

void mb_store_opts_init(struct mb_store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->listen_host = "127.0.0.1";
	o->stats_fd = -1;
	o->compression = 1;
	o->compress_min = 256;
	o->max_connections = 20000;
	o->max_frame = MB_PROTO_MAX_FRAME;
	o->idle_timeout_s = 1800;
	o->auth_delay_ms = 250;
	o->prelogon_frame = MB_STORE_PRELOGON_FRAME;
	o->partial_budget_mb = 256;
	o->held_session_mb = MB_STORE_HELD_SESSION_MB;
	o->held_store_mb = MB_STORE_HELD_MB;
	o->min_free_mb = MB_STORE_MIN_FREE_MB;
	o->logon_timeout_s = 30;
	o->frame_timeout_s = 30;
}

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return 64; /* a guess on the safe side */
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the directory itself */
}

/* The descriptor cap on connections (see store.h). */
static void set_conn_cap(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	struct rlimit rl;
	long limit = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			struct rlimit up = rl;
			up.rlim_cur = rl.rlim_max > (1u << 20) ? (1u << 20) : rl.rlim_max;
			if (up.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0)
				rl = up;
		}
		limit = rl.rlim_cur == RLIM_INFINITY ? (1L << 20) : (long)rl.rlim_cur;
	}
	/* loop handles (epoll, async, signal pipes, listener) come after: 16 */
	long reserve = st->o.fd_reserve > 0 ? st->o.fd_reserve : MB_STORE_FD_RESERVE + 4 * st->nsg;
	long cap = limit - count_open_fds() - 16 - reserve;
	if (cap < 1)
		cap = 1;
	if (cap > INT32_MAX)
		cap = INT32_MAX;
	ls->fd_limit = (int)(limit > INT32_MAX ? INT32_MAX : limit);
	ls->conn_cap = (int)cap;
	ls->partial_budget = (size_t)st->o.partial_budget_mb << 20;
}

static void on_stop_async(uv_async_t *a) { mb__net_begin_stop(a->data); }

static void on_signal(uv_signal_t *s, int sig)
{
	(void)sig;
	mb__net_begin_stop(s->data);
}

void mb_store_stop(struct mb_store *s)
{
	struct loop_state *ls = s->loop_state;
	uv_async_send(&ls->stop_async);
}

void mb_store_delivery_counts(struct mb_store *s, uint64_t *per_db, uint64_t *per_rcpt)
{
	*per_db = atomic_load(&s->c.deliveries_db);
	*per_rcpt = atomic_load(&s->c.deliveries_rcpt);
}

int mb_store_port(const struct mb_store *s)
{
	const struct loop_state *ls = s->loop_state;
	return ls->port;
}

int mb_store_conn_cap(const struct mb_store *s)
{
	const struct loop_state *ls = s->loop_state;
	return ls->conn_cap;
}

int mb_store_create(const struct mb_store_opts *o, struct mb_store **out, char *err, size_t errlen)
{
	struct mb_store *st = calloc(1, sizeof(*st));
	struct loop_state *ls = calloc(1, sizeof(*ls));
	char path[4200];
	int rc;

	/* A client that closes while its reply is written is an EPIPE of that
	 * connection, never a SIGPIPE of the process (the library may run in
	 * a process that did not ignore it: the unit tests). */
	signal(SIGPIPE, SIG_IGN);
	if (!st || !ls) {
		free(st);
		free(ls);
		snprintf(err, errlen, "out of memory");
		return MB_ENOMEM;
	}
	st->o = *o;
	st->held.session_max =
	    (size_t)(o->held_session_mb > 0 ? o->held_session_mb : MB_STORE_HELD_SESSION_MB) << 20;
	st->held.store_max = (size_t)(o->held_store_mb > 0 ? o->held_store_mb : MB_STORE_HELD_MB)
			     << 20;
	if (!st->o.listen_host)
		st->o.listen_host = "127.0.0.1";
	if (!st->o.max_frame || st->o.max_frame > MB_PROTO_MAX_FRAME)
		st->o.max_frame = MB_PROTO_MAX_FRAME;
	st->loop_state = ls;
	pthread_mutex_init(&st->done_mu, NULL);
	pthread_mutex_init(&st->reserve.look_mu, NULL);
	pthread_mutex_init(&st->pause_mu, NULL);
	pthread_cond_init(&st->pause_cv, NULL);
	snprintf(path, sizeof(path), "%s/topology.json", o->data);
	rc = mb_topology_read(path, &st->topo, err, errlen);
	if (rc) {
		if (rc == MB_ENOTFOUND)
			snprintf(err, errlen, "%s: not found (run `mailbench init` first)", path);
		goto fail;
	}
	/* content of another initialisation version is laid out otherwise
	 * (store.h, MB_INIT_VERSION): refused, not misread */
	snprintf(path, sizeof(path), "%s/init.state", o->data);
	json_error_t jerr;
	json_t *ist = json_load_file(path, 0, &jerr);
	if (!ist && access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s: line %d: %s", path, jerr.line, jerr.text);
		rc = MB_ECONFIG;
		goto fail;
	}
	if (ist) {
		int ver = (int)json_integer_value(json_object_get(ist, "version"));
		json_decref(ist);
		if (ver != MB_INIT_VERSION) {
			snprintf(err, errlen,
				 "%s: version: an initialisation of version %d is there (this "
				 "mailbench reads version %d: other mailbox content); "
				 "`mailbench init --restart` replaces it",
				 path, ver, MB_INIT_VERSION);
			rc = MB_ECONFIG;
			goto fail;
		}
	}
	if (o->dump_payloads && *o->dump_payloads) {
		/* private to the user, as the data: the payloads hold the mail */
		int fd = open(o->dump_payloads, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ls->dump = fd >= 0 ? fdopen(fd, "wb") : NULL;
		if (!ls->dump) {
			snprintf(err, errlen, "--dump-payloads: cannot create %s: %s",
				 o->dump_payloads, strerror(errno));
			if (fd >= 0)
				close(fd);
			rc = MB_EINVAL;
			goto fail;
		}
	}
	const struct mb_topo_info *ti = mb_topology_info(st->topo);
	double cache_mb = o->cache_mb > 0 ? o->cache_mb : ti->db_cache_mb;
	/* a data directory from before the secret: one for this process */
	if (ti->has_secret)
		memcpy(st->salt_secret, ti->secret, sizeof(st->salt_secret));
	else if ((rc = mb_auth_random(st->salt_secret, sizeof(st->salt_secret)))) {
		snprintf(err, errlen, "no random bytes for the salt secret: %s", mb_strerror(rc));
		goto fail;
	}
	rc = mb_fault_create(NULL, &st->fault);
	if (!rc)
		rc = mb_io_create(mb_fault_vfs(st->fault), &st->io);
	if (!rc)
		rc = mb_cache_create((uint64_t)(cache_mb * 1048576.0), &st->cache);
	if (!rc) /* the run's scenario's, else as init recorded it */
		mb_cache_set_write_max(
		    st->cache,
		    (uint32_t)(o->write_max_kb > 0 ? o->write_max_kb : ti->write_max_kb) * 1024u);
	if (rc) {
		snprintf(err, errlen, "cannot create the database cache (%g MB): %s", cache_mb,
			 mb_strerror(rc));
		goto fail;
	}
	st->nsg = ti->storage_groups;
	st->ndb = ti->databases;
	st->sgs = calloc((size_t)st->nsg, sizeof(*st->sgs));
	st->w = calloc((size_t)st->ndb, sizeof(*st->w));
	if (!st->sgs || !st->w) {
		rc = MB_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int g = 1; g <= st->nsg; g++) {
		rc = mb__groups_open(st, g, err, errlen);
		if (rc)
			goto fail;
	}
	for (int d = 1; d <= st->ndb; d++) {
		struct dbw *w = &st->w[d - 1];
		w->st = st;
		w->index = d;
		w->sg = mb_topology_db_sg(st->topo, d);
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
		rc = mb__groups_open_db(st, w, err, errlen);
		if (rc)
			goto fail;
	}
	ls->sgst = calloc((size_t)st->nsg, sizeof(*ls->sgst));
	if (!ls->sgst) {
		rc = MB_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	set_conn_cap(st);
	mb__reserve_init(st);

	/* the loop */
	uv_loop_init(&ls->loop);
	ls->readbuf = malloc(READ_CHUNK);
	ls->nmailboxes = mb_topology_user_count(st->topo) + 1;
	ls->by_mailbox = calloc((size_t)ls->nmailboxes, sizeof(*ls->by_mailbox));
	if (!ls->readbuf || !ls->by_mailbox || mb_buf_create(1 << 16, &ls->enc) ||
	    mb_buf_create(1 << 16, &ls->tmp) || mb_buf_create(0, &ls->zbuf) ||
	    mb_lz77_create(MB_LZ77_DEPTH, &ls->lz77) || mb_hist_create(&ls->rpc_hist)) {
		rc = MB_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail_loop;
	}
	for (int i = 0; i < MB_OP_COUNT; i++)
		if (mb_hist_create(&ls->op_hist[i])) {
			rc = MB_ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail_loop;
		}
	if ((rc = mb__net_listen(st, err, errlen)))
		goto fail_loop;
	uv_async_init(&ls->loop, &ls->done_async, mb__net_on_done);
	ls->done_async.data = st;
	uv_async_init(&ls->loop, &ls->stop_async, on_stop_async);
	ls->stop_async.data = st;
	uv_timer_init(&ls->loop, &ls->stats_timer);
	ls->stats_timer.data = st;
	uv_timer_init(&ls->loop, &ls->sweep_timer);
	ls->sweep_timer.data = st;
	mb__ctl_init(st);
	if (o->install_signals) {
		uv_signal_init(&ls->loop, &ls->sigterm);
		uv_signal_init(&ls->loop, &ls->sigint);
		ls->sigterm.data = ls->sigint.data = st;
		uv_signal_start(&ls->sigterm, on_signal, SIGTERM);
		uv_signal_start(&ls->sigint, on_signal, SIGINT);
		ls->signals = true;
	}
	if (o->stats_fd >= 0 && mb_stats_writer_create(o->stats_fd, "store", &ls->stats)) {
		rc = MB_EINVAL;
		snprintf(err, errlen, "--stats-fd %d: not writable", o->stats_fd);
		goto fail_loop;
	}
	mb__workers_start(st);
	if (o->stats_fd >= 0)
		mb__ctl_start(st);
	*out = st;
	return 0;

fail_loop:
	uv_walk(&ls->loop, (uv_walk_cb)uv_close, NULL);
	uv_run(&ls->loop, UV_RUN_DEFAULT);
	uv_loop_close(&ls->loop);
fail:
	if (st->w)
		mb__groups_close_all(st, NULL);
	mb_store_destroy(st);
	return rc ? rc : MB_EIO;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (uv_is_closing(h))
		return;
	if (h->type == UV_TCP && h->data && h->data != arg) {
		struct conn *c = h->data;
		if (c->st == arg)
			return; /* connections are closed through mb__net_conn_close */
	}
	uv_close(h, NULL);
}

int mb_store_run(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	int rc = 0;

	ls->t_prev = mb_now_s();
	ls->inflight_t = ls->t_prev;
	mb_proc_sample(0, &ls->ps_prev);
	ls->loop_cpu_prev = mb_thread_cpu_s(); /* this is the loop thread */
	mb_io_stats_get(st->io, &ls->io_prev);
	mb_cache_stats_get(st->cache, &ls->cache_prev);
	uv_timer_start(&ls->stats_timer, mb__stats_on_timer, 1000, 1000);
	uv_timer_start(&ls->sweep_timer, mb__net_on_sweep, SWEEP_MS, SWEEP_MS);
	uv_run(&ls->loop, UV_RUN_DEFAULT);

	mb__net_drain(st);
	mb__workers_stop(st);
	mb__ctl_stop(st);
	mb__stats_on_timer(&ls->stats_timer); /* the last window, before the groups close */
	mb__groups_close_all(st, &rc);
	if (ls->stats) {
		mb_stats_write_end(ls->stats);
		mb_stats_writer_destroy(ls->stats);
		ls->stats = NULL;
	}
	uv_walk(&ls->loop, close_walk, st);
	if (ls->signals) /* the command's: a late second SIGTERM must not cut the exit */
		mb_signals_absorb();
	uv_run(&ls->loop, UV_RUN_DEFAULT);
	uv_loop_close(&ls->loop);
	return rc;
}

void mb_store_destroy(struct mb_store *st)
{
	if (!st)
		return;
	struct loop_state *ls = st->loop_state;
	if (st->w) {
		for (int d = 0; d < st->ndb; d++) {
			if (st->w[d].index) {
				pthread_mutex_destroy(&st->w[d].mu);
				pthread_cond_destroy(&st->w[d].cv);
			}
		}
	}
	free(st->w);
	free(st->sgs);
	if (st->cache)
		mb_cache_destroy(st->cache);
	if (st->io)
		mb_io_destroy(st->io);
	if (st->fault)
		mb_fault_destroy(st->fault);
	mb_topology_destroy(st->topo);
	pthread_mutex_destroy(&st->done_mu);
	pthread_mutex_destroy(&st->reserve.look_mu);
	pthread_mutex_destroy(&st->pause_mu);
	pthread_cond_destroy(&st->pause_cv);
	if (ls) {
		free(ls->sgst);
		if (ls->ctl_mu_init)
			pthread_mutex_destroy(&ls->ctl_mu);
		free(ls->readbuf);
		free(ls->by_mailbox);
		mb_buf_destroy(ls->enc);
		mb_buf_destroy(ls->tmp);
		mb_buf_destroy(ls->zbuf);
		mb_lz77_destroy(ls->lz77);
		if (ls->dump && fclose(ls->dump))
			fprintf(stderr, "mailbench store: --dump-payloads: %s\n", strerror(errno));
		mb_hist_destroy(ls->rpc_hist);
		for (int i = 0; i < MB_OP_COUNT; i++)
			mb_hist_destroy(ls->op_hist[i]);
		if (ls->stats)
			mb_stats_writer_destroy(ls->stats);
		free(ls);
	}
	free(st);
}
