/* distload.c: the load command's side of the distributed engine (see
 * distload.h).  Invariants: only complete lines ('\n'-terminated) leave a
 * rank's spool, each exactly once and in the order written; rank 0 is the
 * only writer of the job's ack log; the CPU share counts each load host's
 * CPUs once (hosts told apart by name). */
#include "config.h"

#include "load/distload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sampler.h"

#define SPOOL_CHUNK (1u << 20)

struct mb_distload {
	const struct mb_dist_ops *ops;
	struct mb_dist *d;
	int rank, size;
	struct mb_dist_slice slice;
	char host[MB_DIST_HOST_MAX];
	int ncpu;
	int spool_fd;	 /* this rank's ack lines, or -1 */
	off_t spool_off; /* bytes already sent */
	int ack_fd;	 /* rank 0: the job's ack log, or -1 */
	bool ack_relay;	 /* rank 0: the lines go out in the stats stream */
	char *buf;	 /* spool read buffer */
	size_t buf_cap;
	struct mb_dist_health *all; /* rank 0: size entries */
	struct mb_proc_sample ps_last;
	bool have_ps;
	double window_cpu_ms; /* the last exchange's CPU time (this thread) */
};

int mb_distload_join(int first, int last, struct mb_distload **out)
{
	const struct mb_dist_ops *ops = mb_dist_get();
	if (!ops) {
		fprintf(stderr, "mailbench load: --mpi: this mailbench was built without Open MPI "
				"(install libopenmpi-dev, then configure --with-mpi)\n");
		return MB_EUNSUPPORTED;
	}
	struct mb_distload *d = calloc(1, sizeof(*d));
	if (!d)
		return MB_ENOMEM;
	d->ops = ops;
	d->spool_fd = d->ack_fd = -1;
	int rc = ops->init(NULL, NULL, &d->d);
	if (rc != 0) {
		fprintf(stderr, "mailbench load: --mpi: cannot join the MPI job: %s\n",
			mb_strerror(rc));
		free(d);
		return rc;
	}
	d->rank = ops->rank(d->d);
	d->size = ops->size(d->d);
	if (gethostname(d->host, sizeof(d->host) - 1) != 0)
		snprintf(d->host, sizeof(d->host), "?");
	d->ncpu = 1;
	mb_online_cpus(&d->ncpu);
	rc = mb_dist_slice(first, last, d->size, d->rank, &d->slice);
	if (rc == MB_ERANGE) {
		if (d->rank == 0)
			fprintf(stderr,
				"mailbench load: --mpi: %d ranks for %d users: at most one rank "
				"per user\n",
				d->size, last - first + 1);
		d->ops->finish(d->d, 0);
		free(d);
		return rc;
	}
	if (d->rank == 0) {
		d->all = calloc((size_t)d->size, sizeof(*d->all));
		if (!d->all) {
			mb_distload_end(d, 3);
			return MB_ENOMEM;
		}
	}
	fprintf(stderr, "mailbench load: rank %d of %d on %s (pid %ld): users %d-%d (%d users)\n",
		d->rank, d->size, d->host, (long)getpid(), d->slice.first, d->slice.last,
		d->slice.users);
	*out = d;
	return 0;
}

int mb_distload_rank(const struct mb_distload *d) { return d->rank; }

int mb_distload_size(const struct mb_distload *d) { return d->size; }

const struct mb_dist_slice *mb_distload_slice(const struct mb_distload *d) { return &d->slice; }

int mb_distload_ack_open(struct mb_distload *d, const char *path, int *engine_fd)
{
	*engine_fd = -1;
	if (!path)
		return 0;
	if (d->rank == 0 && !strcmp(path, "-")) {
		d->ack_relay = true;
	} else if (d->rank == 0) {
		d->ack_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (d->ack_fd < 0) {
			int e = errno;
			fprintf(stderr, "mailbench load: --ack-log %s: %s\n", path, strerror(e));
			return MB_EIO;
		}
	}
	const char *tmp = getenv("TMPDIR");
	char spool[4096];
	snprintf(spool, sizeof(spool), "%s/mailbench-ack.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	d->spool_fd = mkostemp(spool, O_CLOEXEC);
	if (d->spool_fd < 0) {
		fprintf(stderr, "mailbench load: rank %d: ack spool %s: %s\n", d->rank, spool,
			strerror(errno));
		return MB_EIO;
	}
	unlink(spool);
	int fl = fcntl(d->spool_fd, F_GETFL);
	fcntl(d->spool_fd, F_SETFL, fl | O_APPEND);
	*engine_fd = d->spool_fd;
	return 0;
}

int mb_distload_barrier(struct mb_distload *d) { return d->ops->barrier(d->d); }

/* The complete lines the engine appended since the last window. */
static size_t spool_take(struct mb_distload *d)
{
	if (d->spool_fd < 0)
		return 0;
	off_t end = lseek(d->spool_fd, 0, SEEK_END);
	if (end <= d->spool_off)
		return 0;
	size_t want = (size_t)(end - d->spool_off);
	if (want > d->buf_cap) {
		size_t cap = want + SPOOL_CHUNK;
		char *b = realloc(d->buf, cap);
		if (!b)
			return 0; /* taken next window */
		d->buf = b;
		d->buf_cap = cap;
	}
	ssize_t n = pread(d->spool_fd, d->buf, want, d->spool_off);
	if (n <= 0)
		return 0;
	size_t len = (size_t)n;
	while (len > 0 && d->buf[len - 1] != '\n')
		len--; /* a line still being written stays for the next window */
	d->spool_off += (off_t)len;
	return len;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "mailbench load: ack log: %s\n", strerror(errno));
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static json_t *ranks_json(const struct mb_distload *d)
{
	json_t *a = json_array();
	for (int r = 0; a && r < d->size; r++) {
		const struct mb_dist_health *h = &d->all[r];
		json_t *o =
		    json_pack("{sisssisisisisisfsbsI}", "rank", h->rank, "host", h->host, "pid",
			      h->pid, "first", h->first_user, "last", h->last_user, "users",
			      h->last_user - h->first_user + 1, "users_on", h->users_on,
			      "cpu_core_pct", h->cpu_core_pct, "saturated", h->saturated != 0,
			      "connect_failures", (json_int_t)h->connect_failures);
		if (o)
			json_object_set_new(o, "window_cpu_ms", json_real(h->window_cpu_ms));
		if (o && h->lag_p99_ms >= 0)
			json_object_set_new(o, "loop_lag_p99_ms", json_real(h->lag_p99_ms));
		if (o)
			json_array_append_new(a, o);
	}
	return a;
}

int mb_distload_window(struct mb_distload *d, struct mb_load_stats *win, bool saturated,
		       double lag_p99_ms, int users_on, double user_days, bool want_stop,
		       struct mb_distload_sums *out, bool *stop)
{
	memset(out, 0, sizeof(*out));
	struct mb_dist_health me;
	memset(&me, 0, sizeof(me));
	me.rank = d->rank;
	me.pid = (int32_t)getpid();
	me.first_user = d->slice.first;
	me.last_user = d->slice.last;
	me.users_on = users_on;
	me.saturated = saturated;
	me.ncpu = d->ncpu;
	me.stop = want_stop;
	me.lag_p99_ms = lag_p99_ms;
	me.user_days = user_days;
	me.connect_failures = win->n.connect_failures;
	me.cpu_core_pct = -1;
	me.window_cpu_ms = d->window_cpu_ms;
	double c0 = mb_thread_cpu_s() * 1e3;
	memcpy(me.host, d->host, sizeof(me.host));
	struct mb_proc_sample ps;
	if (mb_proc_sample(0, &ps) == 0) {
		if (d->have_ps && ps.t > d->ps_last.t)
			me.cpu_core_pct =
			    (ps.cpu_s - d->ps_last.cpu_s) / (ps.t - d->ps_last.t) * 100.0;
		d->ps_last = ps;
		d->have_ps = true;
	}
	size_t alen = spool_take(d);
	char *acks = NULL;
	size_t acks_len = 0;
	int any = 0;
	int rc = d->ops->window(d->d, win, &me, d->all, d->buf, alen, &acks, &acks_len, &any);
	d->window_cpu_ms = mb_thread_cpu_s() * 1e3 - c0;
	if (rc != 0)
		return rc;
	*stop = any != 0;
	if (d->rank != 0)
		return 0;
	if (d->ack_fd >= 0 && acks_len)
		write_all(d->ack_fd, acks, acks_len);
	if (d->ack_relay && acks_len) {
		out->acks = acks; /* the caller's now */
		out->acks_len = acks_len;
	} else {
		free(acks);
	}
	double cores = 0, cpus = 0;
	bool cpu_known = true;
	for (int r = 0; r < d->size; r++) {
		const struct mb_dist_health *h = &d->all[r];
		out->users_on += h->users_on;
		out->user_days += h->user_days;
		if (h->saturated) {
			out->saturated = true;
			out->saturated_ranks++;
		}
		if (h->cpu_core_pct < 0)
			cpu_known = false;
		cores += h->cpu_core_pct / 100.0;
		bool seen = false;
		for (int q = 0; q < r && !seen; q++)
			seen = !strcmp(d->all[q].host, h->host);
		if (!seen)
			cpus += h->ncpu > 0 ? h->ncpu : 1;
	}
	if (cpu_known && cpus > 0) {
		out->cpu_pct = cores / cpus * 100.0;
		out->has_cpu = true;
	}
	out->ranks = ranks_json(d);
	return 0;
}

void mb_distload_end(struct mb_distload *d, int code)
{
	if (!d)
		return;
	d->ops->finish(d->d, code);
	if (d->spool_fd >= 0)
		close(d->spool_fd);
	if (d->ack_fd >= 0)
		close(d->ack_fd);
	free(d->buf);
	free(d->all);
	free(d);
}
