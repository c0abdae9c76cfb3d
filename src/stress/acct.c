/* acct.c: per-thread slots, windows and figures of the storage test (see
 * acct.h).  Invariant: a recorded I/O is in exactly one place at any time
 * (its slot, or the window it was drained into). */
#include "stress/acct.h"
#include "core/error.h"
#include "core/hist.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_stress_window {
	struct mb_hist *hist[MB_XFER_COUNT];
	uint64_t count[MB_XFER_COUNT];
	uint64_t bytes[MB_XFER_COUNT];
	uint64_t errors;
	uint64_t txns;
};

struct mb_stress_slot {
	pthread_mutex_t mu;
	struct mb_stress_window win;
	struct mb_stress_acct *acct;
	struct mb_stress_slot *next;
};

struct mb_stress_acct {
	pthread_mutex_t mu;
	struct mb_stress_slot *slots;
	uint64_t errors;
	bool have_first;
	char first_what[256];
	char first_file[1024];
	uint64_t first_offset;
	int first_code;
	mb_stress_source_fn source;
	void *source_arg;
};

static void win_fini(struct mb_stress_window *w)
{
	for (int k = 0; k < MB_XFER_COUNT; k++)
		mb_hist_destroy(w->hist[k]);
	memset(w, 0, sizeof(*w));
}

static int win_init(struct mb_stress_window *w)
{
	memset(w, 0, sizeof(*w));
	for (int k = 0; k < MB_XFER_COUNT; k++) {
		int rc = mb_hist_create(&w->hist[k]);
		if (rc) {
			win_fini(w);
			return rc;
		}
	}
	return 0;
}

static void win_clear(struct mb_stress_window *w)
{
	for (int k = 0; k < MB_XFER_COUNT; k++) {
		mb_hist_reset(w->hist[k]);
		w->count[k] = 0;
		w->bytes[k] = 0;
	}
	w->errors = 0;
	w->txns = 0;
}

static void win_add(struct mb_stress_window *dst, const struct mb_stress_window *src)
{
	for (int k = 0; k < MB_XFER_COUNT; k++) {
		if (src->count[k])
			mb_hist_merge(dst->hist[k], src->hist[k]);
		dst->count[k] += src->count[k];
		dst->bytes[k] += src->bytes[k];
	}
	dst->errors += src->errors;
	dst->txns += src->txns;
}

int mb_stress_acct_create(struct mb_stress_acct **out)
{
	*out = NULL;
	struct mb_stress_acct *a = calloc(1, sizeof(*a));
	if (!a)
		return MB_ENOMEM;
	pthread_mutex_init(&a->mu, NULL);
	*out = a;
	return 0;
}

void mb_stress_acct_destroy(struct mb_stress_acct *a)
{
	if (!a)
		return;
	struct mb_stress_slot *s = a->slots;
	while (s) {
		struct mb_stress_slot *n = s->next;
		win_fini(&s->win);
		pthread_mutex_destroy(&s->mu);
		free(s);
		s = n;
	}
	pthread_mutex_destroy(&a->mu);
	free(a);
}

int mb_stress_acct_slot(struct mb_stress_acct *a, struct mb_stress_slot **out)
{
	*out = NULL;
	struct mb_stress_slot *s = calloc(1, sizeof(*s));
	if (!s)
		return MB_ENOMEM;
	int rc = win_init(&s->win);
	if (rc) {
		free(s);
		return rc;
	}
	pthread_mutex_init(&s->mu, NULL);
	s->acct = a;
	pthread_mutex_lock(&a->mu);
	s->next = a->slots;
	a->slots = s;
	pthread_mutex_unlock(&a->mu);
	*out = s;
	return 0;
}

void mb_stress_slot_record(struct mb_stress_slot *s, enum mb_xfer kind, uint64_t ns, uint64_t bytes)
{
	pthread_mutex_lock(&s->mu);
	mb_hist_record(s->win.hist[kind], ns);
	s->win.count[kind]++;
	s->win.bytes[kind] += bytes;
	pthread_mutex_unlock(&s->mu);
}

void mb_stress_slot_txn(struct mb_stress_slot *s)
{
	pthread_mutex_lock(&s->mu);
	s->win.txns++;
	pthread_mutex_unlock(&s->mu);
}

void mb_stress_slot_error(struct mb_stress_slot *s, const char *file, uint64_t offset, int code,
			  const char *what)
{
	pthread_mutex_lock(&s->mu);
	s->win.errors++;
	pthread_mutex_unlock(&s->mu);
	struct mb_stress_acct *a = s->acct;
	pthread_mutex_lock(&a->mu);
	a->errors++;
	if (!a->have_first) {
		a->have_first = true;
		snprintf(a->first_what, sizeof(a->first_what), "%s",
			 what ? what : mb_strerror(code));
		snprintf(a->first_file, sizeof(a->first_file), "%s", file ? file : "?");
		a->first_offset = offset;
		a->first_code = code;
	}
	pthread_mutex_unlock(&a->mu);
}

int mb_stress_acct_drain(struct mb_stress_acct *a, struct mb_stress_window *w)
{
	pthread_mutex_lock(&a->mu);
	for (struct mb_stress_slot *s = a->slots; s; s = s->next) {
		pthread_mutex_lock(&s->mu);
		win_add(w, &s->win);
		win_clear(&s->win);
		pthread_mutex_unlock(&s->mu);
	}
	if (a->source)
		a->source(a->source_arg, w);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

void mb_stress_acct_set_source(struct mb_stress_acct *a, mb_stress_source_fn fn, void *arg)
{
	pthread_mutex_lock(&a->mu);
	a->source = fn;
	a->source_arg = arg;
	pthread_mutex_unlock(&a->mu);
}

void mb_stress_window_add_hist(struct mb_stress_window *w, enum mb_xfer kind,
			       const struct mb_hist *h, uint64_t bytes)
{
	uint64_t n = mb_hist_count(h);
	if (n)
		mb_hist_merge(w->hist[kind], h);
	w->count[kind] += n;
	w->bytes[kind] += bytes;
}

void mb_stress_window_add_counts(struct mb_stress_window *w, uint64_t txns, uint64_t errors)
{
	w->txns += txns;
	w->errors += errors;
}

uint64_t mb_stress_acct_errors(struct mb_stress_acct *a)
{
	pthread_mutex_lock(&a->mu);
	uint64_t n = a->errors;
	pthread_mutex_unlock(&a->mu);
	return n;
}

bool mb_stress_acct_first_error(struct mb_stress_acct *a, char *buf, size_t len, char *file,
				size_t file_len, uint64_t *offset)
{
	pthread_mutex_lock(&a->mu);
	bool have = a->have_first;
	if (have) {
		if (buf && len)
			snprintf(buf, len, "%s (%s)", a->first_what, mb_errname(a->first_code));
		if (file && file_len)
			snprintf(file, file_len, "%s", a->first_file);
		if (offset)
			*offset = a->first_offset;
	}
	pthread_mutex_unlock(&a->mu);
	return have;
}

int mb_stress_window_create(struct mb_stress_window **out)
{
	*out = NULL;
	struct mb_stress_window *w = malloc(sizeof(*w));
	if (!w)
		return MB_ENOMEM;
	int rc = win_init(w);
	if (rc) {
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void mb_stress_window_destroy(struct mb_stress_window *w)
{
	if (!w)
		return;
	win_fini(w);
	free(w);
}

void mb_stress_window_reset(struct mb_stress_window *w) { win_clear(w); }

void mb_stress_window_merge(struct mb_stress_window *dst, const struct mb_stress_window *src)
{
	win_add(dst, src);
}

uint64_t mb_stress_window_count(const struct mb_stress_window *w, enum mb_xfer kind)
{
	return w->count[kind];
}

const struct mb_hist *mb_stress_window_hist(const struct mb_stress_window *w, enum mb_xfer kind)
{
	return w->hist[kind];
}

static void lat_of(const struct mb_hist *h, struct mb_lat *out)
{
	out->count = mb_hist_count(h);
	if (!out->count) {
		out->avg = out->p95 = out->p99 = out->max = 0.0;
		return;
	}
	out->avg = mb_hist_mean_ns(h) / 1e6;
	out->p95 = (double)mb_hist_percentile_ns(h, 95.0) / 1e6;
	out->p99 = (double)mb_hist_percentile_ns(h, 99.0) / 1e6;
	out->max = (double)mb_hist_max_ns(h) / 1e6;
}

void mb_stress_window_figures(const struct mb_stress_window *w, double seconds, int threads,
			      struct mb_stress_figures *out)
{
	memset(out, 0, sizeof(*out));
	out->threads = threads;
	out->seconds = seconds;
	double s = seconds > 0 ? seconds : 1.0;
	out->db_read_iops = (double)w->count[MB_XFER_DB_READ] / s;
	out->db_write_iops = (double)w->count[MB_XFER_DB_WRITE] / s;
	out->log_write_iops = (double)w->count[MB_XFER_LOG_WRITE] / s;
	out->iops = out->db_read_iops + out->db_write_iops + out->log_write_iops;
	out->db_read_bytes_s = (double)w->bytes[MB_XFER_DB_READ] / s;
	out->db_write_bytes_s = (double)w->bytes[MB_XFER_DB_WRITE] / s;
	out->log_write_bytes_s = (double)w->bytes[MB_XFER_LOG_WRITE] / s;
	lat_of(w->hist[MB_XFER_DB_READ], &out->db_read);
	lat_of(w->hist[MB_XFER_DB_WRITE], &out->db_write);
	lat_of(w->hist[MB_XFER_LOG_WRITE], &out->log_write);
	out->errors = w->errors;
	out->transactions = w->txns;
}
