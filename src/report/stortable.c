/* stortable.c: the storage comparison table (stortable.h).  Invariant: the
 * published series carry the storage file's figures unchanged (doubles
 * copied, never reformatted before a renderer asks for a cell). */
#include "report/stortable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "report/report.h"

struct mb_stortable {
	struct mb_thresholds th;
	char heading[256]; /* the published rows' heading */
	struct mb_stor_series *s;
	int n, cap;
};

static const struct {
	const char *label; /* console row */
	const char *head;  /* storage-test column */
	int decimals;	   /* -1: thousands-separated count */
} measures[MB_SM_COUNT] = {
    [MB_SM_THREADS] = {"threads", "threads", 0},
    [MB_SM_IOPS] = {"total IOPS", "total IOPS", -1},
    [MB_SM_DB_READ_S] = {"db reads/s", "db read/s", -1},
    [MB_SM_DB_WRITE_S] = {"db writes/s", "db wrt/s", -1},
    [MB_SM_LOG_WRITE_S] = {"log writes/s", "log wrt/s", -1},
    [MB_SM_READ_AVG] = {"db read avg (ms)", "read avg", 2},
    [MB_SM_READ_P95] = {"db read p95 (ms)", "read p95", 2},
    [MB_SM_READ_P99] = {"db read p99 (ms)", "read p99", 2},
    [MB_SM_READ_MAX] = {"db read max (ms)", "read max", 2},
    [MB_SM_LOG_AVG] = {"log write avg (ms)", "log avg", 2},
    [MB_SM_LOG_P95] = {"log write p95 (ms)", "log p95", 2},
    [MB_SM_LOG_P99] = {"log write p99 (ms)", "log p99", 2},
    [MB_SM_LOG_MAX] = {"log write max (ms)", "log max", 2},
    [MB_SM_MBS] = {"MB/s", "MB/s", 1},
    [MB_SM_ERRORS] = {"errors", "errors", 0},
    [MB_SM_VERDICT] = {"verdict", "verdict", 0},
};

const char *mb_stor_measure_label(enum mb_stor_measure m)
{
	return (unsigned)m < MB_SM_COUNT ? measures[m].label : "";
}

static int push(struct mb_stortable *t, const struct mb_stor_series *s)
{
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		struct mb_stor_series *n = realloc(t->s, (size_t)cap * sizeof(*n));
		if (!n)
			return MB_ENOMEM;
		t->s = n;
		t->cap = cap;
	}
	struct mb_stor_series *d = &t->s[t->n++];
	*d = *s;
	if (!d->has_verdict)
		d->verdict =
		    mb_storage_verdict(&t->th, d->has[MB_SM_READ_AVG], d->v[MB_SM_READ_AVG],
				       d->has[MB_SM_LOG_AVG], d->v[MB_SM_LOG_AVG]);
	d->has[MB_SM_VERDICT] = true;
	return 0;
}

int mb_stortable_create(const struct mb_storage_cfg *st, const struct mb_thresholds *th,
			struct mb_stortable **out)
{
	struct mb_stortable *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	if (th)
		t->th = *th;
	else
		mb_thresholds_init(&t->th, NULL, NULL);
	if (st)
		snprintf(t->heading, sizeof(t->heading), "%s", st->ref_heading);
	for (int i = 0; st && i < st->ref_count; i++) {
		const struct mb_storage_ref *ref = &st->ref[i];
		struct mb_stor_series s;
		memset(&s, 0, sizeof(s));
		snprintf(s.name, sizeof(s.name), "pub %d", ref->threads);
		snprintf(s.longname, sizeof(s.longname), "published: %s", st->ref_heading);
		s.prio = 10 - i;
		s.published = true;
		s.has[MB_SM_THREADS] = s.has[MB_SM_IOPS] = true;
		s.has[MB_SM_READ_AVG] = s.has[MB_SM_LOG_AVG] = true;
		s.v[MB_SM_THREADS] = ref->threads;
		s.v[MB_SM_IOPS] = ref->iops;
		s.v[MB_SM_READ_AVG] = ref->db_read_ms;
		s.v[MB_SM_LOG_AVG] = ref->log_write_ms;
		int rc = push(t, &s);
		if (rc) {
			mb_stortable_destroy(t);
			return rc;
		}
	}
	*out = t;
	return 0;
}

void mb_stortable_destroy(struct mb_stortable *t)
{
	if (!t)
		return;
	free(t->s);
	free(t);
}

int mb_stortable_add(struct mb_stortable *t, const struct mb_stor_series *s)
{
	struct mb_stor_series c = *s;
	c.published = false;
	return push(t, &c);
}

int mb_stortable_count(const struct mb_stortable *t) { return t->n; }

const struct mb_stor_series *mb_stortable_series(const struct mb_stortable *t, int i)
{
	return i >= 0 && i < t->n ? &t->s[i] : NULL;
}

int mb_stortable_published(const struct mb_stortable *t, int threads)
{
	for (int i = 0; i < t->n; i++)
		if (t->s[i].published && (int)t->s[i].v[MB_SM_THREADS] == threads)
			return i;
	return -1;
}

void mb_stortable_cell(const struct mb_stortable *t, int series, enum mb_stor_measure m, char *buf,
		       size_t len)
{
	const struct mb_stor_series *s = mb_stortable_series(t, series);
	if (!s || (unsigned)m >= MB_SM_COUNT || !s->has[m]) {
		snprintf(buf, len, "n/a");
		return;
	}
	if (m == MB_SM_VERDICT)
		snprintf(buf, len, "%s", mb_verdict_str(s->verdict));
	else if (measures[m].decimals < 0)
		mb_format_number(s->v[m], 0, buf, len);
	else
		snprintf(buf, len, "%.*f", measures[m].decimals, s->v[m]);
}

int mb_stortable_by_measure(const struct mb_stortable *t, const enum mb_stor_measure *rows, int n,
			    struct mb_table **out)
{
	if (t->n > MB_TABLE_MAX_COLS)
		return MB_ERANGE;
	struct mb_table *tb;
	int rc = mb_table_create(t->n, &tb);
	if (rc)
		return rc;
	for (int i = 0; i < t->n; i++) {
		mb_table_set_heading(tb, i, t->s[i].name, t->s[i].longname);
		mb_table_set_priority(tb, i, t->s[i].prio);
	}
	char buf[64];
	for (int k = 0; k < n && !rc; k++) {
		int r;
		if ((rc = mb_table_add_row(tb, mb_stor_measure_label(rows[k]), MB_ROW_NORMAL, &r)))
			break;
		for (int i = 0; i < t->n; i++) {
			mb_stortable_cell(t, i, rows[k], buf, sizeof(buf));
			mb_table_set_cell(tb, r, i, buf);
			if (rows[k] == MB_SM_VERDICT && t->s[i].colour)
				mb_table_set_verdict(tb, r, t->s[i].verdict);
		}
	}
	if (rc) {
		mb_table_destroy(tb);
		return rc;
	}
	*out = tb;
	return 0;
}

int mb_stortable_by_threads(const struct mb_stortable *t, const enum mb_stor_measure *cols, int n,
			    struct mb_table **out)
{
	static const enum mb_stor_measure pubm[3] = {MB_SM_IOPS, MB_SM_READ_AVG, MB_SM_LOG_AVG};
	static const char *const pubh[3] = {"pub IOPS", "pub read", "pub log"};
	if (n < 0 || n + 3 > MB_TABLE_MAX_COLS)
		return MB_ERANGE;
	struct mb_table *tb;
	int rc = mb_table_create(n + 3, &tb);
	if (rc)
		return rc;
	char lg[320], buf[64];
	mb_table_set_label_heading(tb, "threads");
	for (int k = 0; k < n; k++)
		mb_table_set_heading(tb, k, measures[cols[k]].head, NULL);
	for (int k = 0; k < 3; k++) {
		snprintf(lg, sizeof(lg),
			 "pub IOPS, read, log: published at the same thread count: %s",
			 t->heading[0] ? t->heading : "none");
		mb_table_set_heading(tb, n + k, pubh[k], k == 0 ? lg : NULL);
	}
	/* measured series first, then the published counts not measured */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		for (int i = 0; i < t->n && !rc; i++) {
			const struct mb_stor_series *s = &t->s[i];
			int thr = (int)s->v[MB_SM_THREADS];
			if (pass == 0 && s->published)
				continue;
			if (pass == 1) {
				if (!s->published)
					continue;
				bool seen = false;
				for (int j = 0; j < t->n; j++)
					seen |= !t->s[j].published &&
						(int)t->s[j].v[MB_SM_THREADS] == thr;
				if (seen)
					continue;
			}
			char label[24];
			snprintf(label, sizeof(label), "%d%s", thr, s->best ? " *" : "");
			int r;
			if ((rc = mb_table_add_row(tb, label, MB_ROW_NORMAL, &r)))
				break;
			mb_table_set_verdict(tb, r, s->published ? MB_VERDICT_NONE : s->verdict);
			for (int k = 0; k < n; k++) {
				if (s->published)
					snprintf(buf, sizeof(buf), "%s",
						 k == 0 ? "(not measured)" : "-");
				else
					mb_stortable_cell(t, i, cols[k], buf, sizeof(buf));
				mb_table_set_cell(tb, r, k, buf);
			}
			int p = mb_stortable_published(t, thr);
			for (int k = 0; k < 3; k++) {
				if (p >= 0)
					mb_stortable_cell(t, p, pubm[k], buf, sizeof(buf));
				else
					snprintf(buf, sizeof(buf), "-");
				mb_table_set_cell(tb, r, n + k, buf);
			}
		}
	}
	if (rc) {
		mb_table_destroy(tb);
		return rc;
	}
	*out = tb;
	return 0;
}

json_t *mb_stortable_published_json(const struct mb_stortable *t)
{
	json_t *rows = json_array();
	for (int i = 0; rows && i < t->n; i++) {
		const struct mb_stor_series *s = &t->s[i];
		if (s->published)
			json_array_append_new(rows, json_pack("{s:i,s:f,s:f,s:f}", "threads",
							      (int)s->v[MB_SM_THREADS], "iops",
							      s->v[MB_SM_IOPS], "db_read_ms",
							      s->v[MB_SM_READ_AVG], "log_write_ms",
							      s->v[MB_SM_LOG_AVG]));
	}
	return rows ? json_pack("{s:s,s:o}", "heading", t->heading, "rows", rows) : NULL;
}
