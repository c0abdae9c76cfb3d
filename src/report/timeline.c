/* timeline.c: per-window latency percentiles and the run JSON's "series"
 * member (see timeline.h).  Invariant: the arrays grow together, one row
 * per window; nothing is interpolated. */
#include "report/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "report/report.h"

struct tl_row {
	double t, p50, p95, p99, score;
};

struct mb_timeline {
	struct tl_row *rows;
	size_t len, cap;
	struct mb_hist *rpc, *act; /* scratch */
};

int mb_timeline_create(struct mb_timeline **out)
{
	struct mb_timeline *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	if (mb_hist_create(&t->rpc) || mb_hist_create(&t->act)) {
		mb_timeline_destroy(t);
		return MB_ENOMEM;
	}
	*out = t;
	return 0;
}

void mb_timeline_destroy(struct mb_timeline *t)
{
	if (!t)
		return;
	mb_hist_destroy(t->rpc);
	mb_hist_destroy(t->act);
	free(t->rows);
	free(t);
}

void mb_timeline_reset(struct mb_timeline *t) { t->len = 0; }

static double pct_ms(const struct mb_hist *h, double p)
{
	return mb_hist_count(h) ? (double)mb_hist_percentile_ns(h, p) / 1e6 : NAN;
}

int mb_timeline_add(struct mb_timeline *tl, double t, const json_t *h)
{
	if (!json_is_object(h))
		return 0;
	mb_hist_reset(tl->rpc);
	mb_hist_reset(tl->act);
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)h, key, val)
	{
		if (!json_is_string(val))
			continue;
		if (!strcmp(key, "rpc"))
			mb_hist_decode_merge(tl->rpc, json_string_value(val));
		else if (!strncmp(key, "action.", 7))
			mb_hist_decode_merge(tl->act, json_string_value(val));
	}
	if (!mb_hist_count(tl->rpc) && !mb_hist_count(tl->act))
		return 0;
	if (tl->len == tl->cap) {
		size_t nc = tl->cap ? tl->cap * 2 : 256;
		struct tl_row *r = realloc(tl->rows, nc * sizeof(*r));
		if (!r)
			return MB_ENOMEM;
		tl->rows = r;
		tl->cap = nc;
	}
	struct tl_row *r = &tl->rows[tl->len++];
	r->t = t;
	r->p50 = pct_ms(tl->rpc, 50);
	r->p95 = pct_ms(tl->rpc, 95);
	r->p99 = pct_ms(tl->rpc, 99);
	r->score = pct_ms(tl->act, 95);
	return 0;
}

size_t mb_timeline_len(const struct mb_timeline *tl) { return tl ? tl->len : 0; }

void mb_timeline_at(const struct mb_timeline *tl, size_t i, double *t, double *p50, double *p95,
		    double *p99, double *score)
{
	const struct tl_row *r = &tl->rows[i];
	*t = r->t;
	*p50 = r->p50;
	*p95 = r->p95;
	*p99 = r->p99;
	*score = r->score;
}

static json_t *num(double v)
{
	/* three significant decimals are plenty for a chart */
	return isnan(v) ? json_null() : json_real(round(v * 1000.0) / 1000.0);
}

json_t *mb_runseries_json(const struct mb_series *s, const struct mb_timeline *tl, double t_offset)
{
	json_t *o = json_object();
	json_t *ts = json_array();
	json_t *cs = json_object();
	json_t *lat = json_object();
	if (!o || !ts || !cs || !lat) {
		json_decref(o);
		json_decref(ts);
		json_decref(cs);
		json_decref(lat);
		return NULL;
	}
	json_object_set_new(o, "t", ts);
	json_object_set_new(o, "counters", cs);
	json_object_set_new(o, "latency", lat);
	size_t n = mb_series_len(s);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ts, num(mb_series_time(s, i) - t_offset));
	for (int id = 0; id < MB_COUNTER_COUNT; id++) {
		json_t *a = NULL;
		for (size_t i = 0; i < n; i++) {
			double v;
			if (!mb_series_get(s, i, (enum mb_counter_id)id, &v))
				v = NAN;
			if (!a && !isnan(v)) {
				/* a counter never measured has no array at all */
				a = json_array();
				for (size_t k = 0; k < i; k++)
					json_array_append_new(a, json_null());
			}
			if (a)
				json_array_append_new(a, num(v));
		}
		if (a)
			json_object_set_new(cs, mb_counters[id].key, a);
	}
	static const char *const names[] = {"t", "p50_ms", "p95_ms", "p99_ms", "score_ms"};
	json_t *arr[5];
	for (int k = 0; k < 5; k++) {
		arr[k] = json_array();
		json_object_set_new(lat, names[k], arr[k]);
	}
	for (size_t i = 0; i < mb_timeline_len(tl); i++) {
		double v[5];
		mb_timeline_at(tl, i, &v[0], &v[1], &v[2], &v[3], &v[4]);
		v[0] -= t_offset;
		for (int k = 0; k < 5; k++)
			json_array_append_new(arr[k], num(v[k]));
	}
	return o;
}

int mb_runseries_attach(const char *path, const struct mb_series *s, const struct mb_timeline *tl,
			double t_offset)
{
	json_t *j = json_load_file(path, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return MB_EPROTO;
	}
	json_t *ser = mb_runseries_json(s, tl, t_offset);
	if (!ser) {
		json_decref(j);
		return MB_ENOMEM;
	}
	json_object_set_new(j, "series", ser);
	int rc = mb_json_write_file(j, path);
	json_decref(j);
	return rc;
}
