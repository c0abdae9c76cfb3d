/* storcols.c: kept storage-test results and thread steps (storcols.h).
 * Invariant: at most one kept result per thread count, sorted by count. */
#include "ui/storcols.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/thresholds.h"

int mb_stor_step(const struct mb_storage_cfg *st, int n, int dir)
{
	int list[MB_STORAGE_MAX_REF + 1], k = 0;
	for (int i = 0; st && i < st->ref_count; i++)
		if (k == 0 || st->ref[i].threads > list[k - 1])
			list[k++] = st->ref[i].threads;
	if (k == 0)
		list[k++] = 4;
	int stepv = k > 1 ? list[k - 1] - list[k - 2] : 4;
	if (dir > 0) {
		for (int i = 0; i < k; i++)
			if (list[i] > n)
				return list[i];
		int v = list[k - 1];
		while (v <= n)
			v += stepv;
		return v;
	}
	if (n > list[k - 1]) {
		int v = list[k - 1];
		while (v + stepv < n)
			v += stepv;
		return v;
	}
	for (int i = k - 1; i >= 0; i--)
		if (list[i] < n)
			return list[i];
	return n > 1 ? n - 1 : 1;
}

static void keep(struct mb_console *c, const struct mb_stor_result *r)
{
	int i = 0;
	while (i < c->nstor && c->stor[i].threads < r->threads)
		i++;
	if (i < c->nstor && c->stor[i].threads == r->threads) {
		c->stor[i] = *r;
		return;
	}
	if (c->nstor == MB_STOR_KEEP) {
		/* full: the oldest idea is the highest count; drop it */
		c->nstor--;
		if (i > c->nstor)
			return;
	}
	memmove(&c->stor[i + 1], &c->stor[i], (size_t)(c->nstor - i) * sizeof(c->stor[0]));
	c->stor[i] = *r;
	c->nstor++;
}

static bool jd(const json_t *o, const char *k, double *v)
{
	const json_t *x = json_object_get(o, k);
	if (!json_is_number(x))
		return false;
	*v = json_number_value(x);
	return true;
}

static void from_json_run(const struct mb_thresholds *th, const json_t *r, struct mb_stor_result *o)
{
	memset(o, 0, sizeof(*o));
	double v;
	o->threads = jd(r, "threads", &v) ? (int)v : 0;
	o->has_iops = jd(r, "iops", &o->iops);
	const json_t *rd = json_object_get(r, "db_read_latency_ms");
	const json_t *lw = json_object_get(r, "log_write_latency_ms");
	o->has_read = jd(rd, "avg", &o->read_avg);
	o->has_log = jd(lw, "avg", &o->log_avg);
	o->has_pct = jd(rd, "p95", &o->read95) && jd(rd, "p99", &o->read99) &&
		     jd(lw, "p95", &o->log95) && jd(lw, "p99", &o->log99);
	o->verdict = mb_storage_verdict(th, o->has_read, o->read_avg, o->has_log, o->log_avg);
}

void mb_stor_capture(struct mb_console *c)
{
	const struct mb_thresholds *th = mb_session_thresholds(c->s);
	enum mb_stress_kind kind = mb_session_stress_kind(c->s);
	char path[4200];
	snprintf(path, sizeof(path), "%s/stress-last.json", mb_session_params(c->s)->data_dir);
	json_t *j = json_load_file(path, 0, NULL);
	c->stor_outcome[0] = '\0';
	if (kind == MB_STRESS_FIXED) {
		/* the session's averages after the warm-up, percentiles of the
		 * whole test: the same figures as the "test avg" column */
		double avg[MB_COUNTER_COUNT];
		bool has[MB_COUNTER_COUNT];
		mb_session_average(c->s, avg, has);
		struct mb_latency rd, lw;
		mb_session_stress_latency(c->s, &rd, &lw);
		struct mb_stor_result r;
		memset(&r, 0, sizeof(r));
		r.threads = mb_session_stress_threads(c->s);
		r.has_iops = has[MB_C_STRESS_IOPS];
		r.iops = avg[MB_C_STRESS_IOPS];
		r.has_read = has[MB_C_STRESS_READ_MS];
		r.read_avg = avg[MB_C_STRESS_READ_MS];
		r.has_log = has[MB_C_STRESS_LOG_MS];
		r.log_avg = avg[MB_C_STRESS_LOG_MS];
		r.has_pct = rd.has && lw.has;
		r.read95 = rd.p95_ms;
		r.read99 = rd.p99_ms;
		r.log95 = lw.p95_ms;
		r.log99 = lw.p99_ms;
		r.verdict = mb_storage_verdict(th, r.has_read, r.read_avg, r.has_log, r.log_avg);
		if (r.has_iops)
			keep(c, &r);
	} else if (kind == MB_STRESS_AUTO && j) {
		const json_t *runs = json_object_get(j, "runs");
		for (size_t i = 0; i < json_array_size(runs); i++) {
			struct mb_stor_result r;
			from_json_run(th, json_array_get(runs, i), &r);
			if (r.threads > 0 && r.has_iops)
				keep(c, &r);
		}
		double bt, bi;
		const json_t *a = json_object_get(j, "auto");
		if (jd(a, "best_threads", &bt) && jd(a, "best_iops", &bi))
			snprintf(
			    c->stor_outcome, sizeof(c->stor_outcome),
			    "auto-tune: best passing thread count %.0f at %.0f IOPS (%zu counts "
			    "measured, each kept as a column)",
			    bt, bi, json_array_size(runs));
		else
			snprintf(c->stor_outcome, sizeof(c->stor_outcome),
				 "auto-tune: no thread count passed (%zu measured)",
				 json_array_size(runs));
	} else if (kind == MB_STRESS_SOFT_RECOVERY && j) {
		const json_t *sr = json_object_get(j, "soft_recovery");
		double seg, rs, mbs;
		if (jd(sr, "segments", &seg) && jd(sr, "replay_s", &rs) && jd(sr, "mb_per_s", &mbs))
			snprintf(c->stor_outcome, sizeof(c->stor_outcome),
				 "soft recovery: %.0f log segments replayed in %.3f s (%.1f MB/s)",
				 seg, rs, mbs);
		else
			snprintf(c->stor_outcome, sizeof(c->stor_outcome),
				 "soft recovery: no result (see %.300s)", path);
	} else if (kind == MB_STRESS_CHECKSUM && j) {
		const json_t *ck = json_object_get(j, "checksum");
		double pages, probs, secs;
		if (jd(ck, "pages", &pages) && jd(ck, "problems", &probs) &&
		    jd(ck, "seconds", &secs))
			snprintf(c->stor_outcome, sizeof(c->stor_outcome),
				 "checksum: %.0f pages verified in %.1f s, %.0f problem%s: %s",
				 pages, secs, probs, probs == 1 ? "" : "s",
				 probs == 0 ? "pass" : "FAIL");
		else
			snprintf(c->stor_outcome, sizeof(c->stor_outcome),
				 "checksum: no result (see %.300s)", path);
	}
	json_decref(j);
}

void mb_stor_series(const struct mb_console *c, int k, struct mb_stor_series *out)
{
	const struct mb_stor_result *r = &c->stor[k];
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%d thr", r->threads);
	snprintf(out->longname, sizeof(out->longname),
		 "N thr: an earlier test of this session at N threads (kept; average after its "
		 "warm-up, p95/p99 of the whole test)");
	out->prio = 60 - k;
	out->has[MB_SM_THREADS] = true;
	out->v[MB_SM_THREADS] = r->threads;
	const struct {
		enum mb_stor_measure m;
		bool has;
		double v;
	} cells[] = {
	    {MB_SM_IOPS, r->has_iops, r->iops},	     {MB_SM_READ_AVG, r->has_read, r->read_avg},
	    {MB_SM_READ_P95, r->has_pct, r->read95}, {MB_SM_READ_P99, r->has_pct, r->read99},
	    {MB_SM_LOG_AVG, r->has_log, r->log_avg}, {MB_SM_LOG_P95, r->has_pct, r->log95},
	    {MB_SM_LOG_P99, r->has_pct, r->log99}};
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		out->has[cells[i].m] = cells[i].has;
		out->v[cells[i].m] = cells[i].v;
	}
	out->has_verdict = true;
	out->verdict = r->verdict;
}
