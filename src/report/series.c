/* series.c: per-second counter rows and merged histograms (see series.h).
 * Invariant: rows are appended in time order and never modified. */
#include "report/series.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

struct row {
	double t;
	double v[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
};

struct mb_series {
	struct row *rows;
	size_t len, cap;
};

int mb_series_create(struct mb_series **out)
{
	struct mb_series *s = calloc(1, sizeof(*s));
	if (!s)
		return MB_ENOMEM;
	*out = s;
	return 0;
}

void mb_series_destroy(struct mb_series *s)
{
	if (!s)
		return;
	free(s->rows);
	free(s);
}

void mb_series_reset(struct mb_series *s) { s->len = 0; }

int mb_series_push(struct mb_series *s, double t, const double *value, const bool *has)
{
	if (s->len == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct row *r = realloc(s->rows, cap * sizeof(*r));
		if (!r)
			return MB_ENOMEM;
		s->rows = r;
		s->cap = cap;
	}
	struct row *r = &s->rows[s->len++];
	r->t = t;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		r->has[i] = has[i];
		r->v[i] = has[i] ? value[i] : 0.0;
	}
	return 0;
}

size_t mb_series_len(const struct mb_series *s) { return s->len; }

double mb_series_time(const struct mb_series *s, size_t i)
{
	return i < s->len ? s->rows[i].t : 0.0;
}

bool mb_series_get(const struct mb_series *s, size_t i, enum mb_counter_id id, double *out)
{
	if (i >= s->len || (int)id < 0 || id >= MB_COUNTER_COUNT || !s->rows[i].has[id])
		return false;
	*out = s->rows[i].v[id];
	return true;
}

static int mean_from(const struct mb_series *s, enum mb_counter_id id, double tmin, bool strict,
		     double *out)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = s->len; i-- > 0;) {
		const struct row *r = &s->rows[i];
		if (strict ? r->t <= tmin : r->t < tmin)
			break;
		if (r->has[id]) {
			sum += r->v[id];
			n++;
		}
	}
	if (n == 0)
		return MB_ENOTFOUND;
	*out = sum / (double)n;
	return 0;
}

int mb_series_window(const struct mb_series *s, enum mb_counter_id id, double seconds, double *out)
{
	if (s->len == 0 || (int)id < 0 || id >= MB_COUNTER_COUNT)
		return MB_ENOTFOUND;
	return mean_from(s, id, s->rows[s->len - 1].t - seconds, true, out);
}

int mb_series_average(const struct mb_series *s, enum mb_counter_id id, double warmup_s,
		      double *out)
{
	if (s->len == 0 || (int)id < 0 || id >= MB_COUNTER_COUNT)
		return MB_ENOTFOUND;
	return mean_from(s, id, warmup_s, false, out);
}

double mb_series_measured_s(const struct mb_series *s, double warmup_s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->len; i++)
		if (s->rows[i].t >= warmup_s)
			n++;
	return (double)n;
}

size_t mb_series_tail(const struct mb_series *s, enum mb_counter_id id, size_t n, double *vals,
		      bool *has)
{
	for (size_t k = 0; k < n; k++) {
		size_t back = n - k; /* rows from the end */
		if (back > s->len) {
			vals[k] = 0;
			has[k] = false;
			continue;
		}
		const struct row *r = &s->rows[s->len - back];
		has[k] = r->has[id];
		vals[k] = r->has[id] ? r->v[id] : 0;
	}
	return n;
}

struct hentry {
	char *name;
	struct mb_hist *h;
};

struct mb_histset {
	struct hentry *e;
	size_t len, cap;
	unsigned long bad;
};

int mb_histset_create(struct mb_histset **out)
{
	struct mb_histset *hs = calloc(1, sizeof(*hs));
	if (!hs)
		return MB_ENOMEM;
	*out = hs;
	return 0;
}

void mb_histset_destroy(struct mb_histset *hs)
{
	if (!hs)
		return;
	for (size_t i = 0; i < hs->len; i++) {
		free(hs->e[i].name);
		mb_hist_destroy(hs->e[i].h);
	}
	free(hs->e);
	free(hs);
}

void mb_histset_reset(struct mb_histset *hs)
{
	for (size_t i = 0; i < hs->len; i++)
		mb_hist_reset(hs->e[i].h);
	hs->bad = 0;
}

const struct mb_hist *mb_histset_find(const struct mb_histset *hs, const char *name)
{
	for (size_t i = 0; i < hs->len; i++)
		if (strcmp(hs->e[i].name, name) == 0)
			return hs->e[i].h;
	return NULL;
}

struct mb_hist *mb_histset_get(struct mb_histset *hs, const char *name)
{
	for (size_t i = 0; i < hs->len; i++)
		if (strcmp(hs->e[i].name, name) == 0)
			return hs->e[i].h;
	if (hs->len == hs->cap) {
		size_t cap = hs->cap ? hs->cap * 2 : 16;
		struct hentry *e = realloc(hs->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		hs->e = e;
		hs->cap = cap;
	}
	struct hentry *e = &hs->e[hs->len];
	e->name = strdup(name);
	if (!e->name)
		return NULL;
	if (mb_hist_create(&e->h)) {
		free(e->name);
		return NULL;
	}
	hs->len++;
	return e->h;
}

int mb_histset_merge_json(struct mb_histset *hs, json_t *obj)
{
	const char *key;
	json_t *val;
	if (!json_is_object(obj))
		return MB_EINVAL;
	json_object_foreach(obj, key, val)
	{
		if (!json_is_string(val)) {
			hs->bad++;
			continue;
		}
		struct mb_hist *h = mb_histset_get(hs, key);
		if (!h)
			return MB_ENOMEM;
		if (mb_hist_decode_merge(h, json_string_value(val)))
			hs->bad++;
	}
	return 0;
}

size_t mb_histset_count(const struct mb_histset *hs) { return hs->len; }

void mb_histset_merge_prefix(const struct mb_histset *hs, const char *prefix, struct mb_hist *dst)
{
	size_t n = strlen(prefix);
	for (size_t i = 0; i < hs->len; i++)
		if (strncmp(hs->e[i].name, prefix, n) == 0)
			mb_hist_merge(dst, hs->e[i].h);
}

unsigned long mb_histset_bad(const struct mb_histset *hs) { return hs->bad; }
