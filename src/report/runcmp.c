/* runcmp.c: runs side by side with normalised differences (see
 * runcmp.h). */
#include "report/runcmp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "report/compare.h"

static const char *const x_label[MB_RX_COUNT] = {"user-equivalents (users x accel)",
						 "LoadSim score (ms)", "RPC round trip p95 (ms)",
						 "RPC round trip p99 (ms)", "failed actions"};
static const char *const x_key[MB_RX_COUNT] = {"user_equivalents", "loadsim_score_ms", "rpc_p95_ms",
					       "rpc_p99_ms", "failed_actions"};
static const int x_dec[MB_RX_COUNT] = {0, 0, 1, 1, 0};

const char *mb_runcmp_target_of(const json_t *run, char *buf, size_t len)
{
	const json_t *t = json_object_get(run, "target");
	if (json_is_object(t))
		t = json_object_get(t, "target");
	if (!json_is_string(t) || !json_string_value(t)[0])
		return NULL;
	snprintf(buf, len, "%s", json_string_value(t));
	return buf;
}

double mb_runcmp_ue(const struct mb_run_summary *r)
{
	return (double)r->users * (r->accel > 0 ? r->accel : 1.0);
}

/* True when counter id grows with the offered load (compared per UE). */
static bool mb_runcmp_per_load(enum mb_counter_id id)
{
	if (id == MB_C_PROCESSOR_PCT || id == MB_C_LOAD_CPU_PCT || id == MB_C_MACHINE_CPU_PCT ||
	    id == MB_C_STORE_LOOP_CPU_PCT)
		return true;
	return mb_counters[id].kind == MB_RATE &&
	       (mb_counters[id].source == MB_SRC_STORE || mb_counters[id].source == MB_SRC_LOAD);
}

bool mb_runcmp_extra(const struct mb_run_summary *r, enum mb_runcmp_extra x, double *v)
{
	switch (x) {
	case MB_RX_UE:
		*v = mb_runcmp_ue(r);
		return r->users > 0;
	case MB_RX_SCORE:
		*v = r->score_ms;
		return r->has_score;
	case MB_RX_RPC_P95:
		*v = r->rpc_latency.p95_ms;
		return r->rpc_latency.has;
	case MB_RX_RPC_P99:
		*v = r->rpc_latency.p99_ms;
		return r->rpc_latency.has;
	case MB_RX_FAILED: {
		double f = 0;
		bool any = false;
		for (int i = 0; i < MB_ACTION_COUNT; i++) {
			if (r->actions[i].has_counts) {
				f += r->actions[i].failed;
				any = true;
			}
		}
		*v = f;
		return any;
	}
	default:
		return false;
	}
}

bool mb_runcmp_diff(const struct mb_run_summary *ref, const struct mb_run_summary *r, int id,
		    enum mb_runcmp_extra x, double *pct, bool *per_ue)
{
	double a, b;
	bool norm = false;
	if (id >= 0) {
		if (!ref->has[id] || !r->has[id])
			return false;
		a = ref->avg[id];
		b = r->avg[id];
		double ua = mb_runcmp_ue(ref), ub = mb_runcmp_ue(r);
		if (mb_runcmp_per_load((enum mb_counter_id)id) && ua > 0 && ub > 0 &&
		    fabs(ua - ub) > 1e-9 * ua) {
			a /= ua;
			b /= ub;
			norm = true;
		}
	} else if (!mb_runcmp_extra(ref, x, &a) || !mb_runcmp_extra(r, x, &b)) {
		return false;
	}
	if (a == 0)
		return false;
	*pct = (b - a) / fabs(a) * 100.0;
	if (per_ue)
		*per_ue = norm;
	return true;
}

/* The caller's target string of run i, else the one its summary records. */
static const char *target_of(const struct mb_runcmp_input *in, size_t i)
{
	if (in->targets && in->targets[i] && in->targets[i][0])
		return in->targets[i];
	return in->runs[i]->target[0] ? in->runs[i]->target : NULL;
}

static void appendf(char *buf, size_t len, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void appendf(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	if (*o >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *o, len - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o = *o + (size_t)n < len ? *o + (size_t)n : len - 1;
}

int mb_runcmp_warnings(const struct mb_runcmp_input *in, char *buf, size_t len)
{
	size_t o = 0;
	int n = 0;
	if (len)
		buf[0] = '\0';
	if (in->n == 0 || in->ref >= in->n)
		return 0;
	const struct mb_run_summary *ref = in->runs[in->ref];
	const char *rt = target_of(in, in->ref);
	for (size_t i = 0; i < in->n; i++) {
		if (i == in->ref)
			continue;
		const struct mb_run_summary *r = in->runs[i];
		if (strcmp(r->scenario, ref->scenario) || r->mode != ref->mode) {
			appendf(
			    buf, len, &o,
			    "warning: run %zu (%s, %s) is of another scenario than run %zu (%s, "
			    "%s): the user profiles differ, so its differences compare unlike "
			    "workloads\n",
			    i + 1, r->id, r->scenario, in->ref + 1, ref->id, ref->scenario);
			n++;
		}
		const char *t = target_of(in, i);
		/* a run that records no target ran before targets existed: against
		 * the embedded store, so only two named targets can differ */
		if (t && rt && strcmp(t, rt)) {
			appendf(buf, len, &o,
				"warning: run %zu (%s) ran against target %s, run %zu (%s) against "
				"%s: the servers differ\n",
				i + 1, r->id, t, in->ref + 1, ref->id, rt);
			n++;
		}
	}
	return n;
}

static const char *smt_str(int smt) { return smt < 0 ? "n/a" : smt ? "on" : "off"; }

static void fmt_pct(bool ok, double pct, bool per_ue, char *buf, size_t len)
{
	if (!ok)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%+.0f%%%s", pct, per_ue ? "/UE" : "");
}

int mb_runcmp_build(const struct mb_runcmp_input *in, struct mb_table **out)
{
	if (in->n == 0 || in->n > MB_RUNCMP_MAX_RUNS || in->ref >= in->n)
		return MB_EINVAL;
	const struct mb_scenario *sc = in->sc;
	int npub = sc ? sc->column_count : 0;
	int c_run0 = npub;
	int c_diff0 = c_run0 + (int)in->n;
	int ncols = c_diff0 + (int)in->n - 1;
	if (ncols > MB_TABLE_MAX_COLS)
		return MB_EINVAL;
	struct mb_table *t;
	int rc = mb_table_create(ncols, &t);
	if (rc)
		return rc;
	char sh[MB_TABLE_CELL_MAX], lg[2048], buf[MB_TABLE_CELL_MAX];
	for (int c = 0; c < npub; c++) {
		snprintf(sh, sizeof(sh), "(%s)", sc->columns[c].id);
		mb_compare_column_legend(sc, c, lg, sizeof(lg));
		mb_table_set_heading(t, c, sh, lg);
		mb_table_set_priority(t, c, 40 - c);
	}
	const struct mb_run_summary *ref = in->runs[in->ref];
	for (size_t i = 0; i < in->n; i++) {
		const struct mb_run_summary *r = in->runs[i];
		char label[128];
		mb_summary_label(r, label, sizeof(label));
		snprintf(sh, sizeof(sh), "run %zu", i + 1);
		snprintf(
		    lg, sizeof(lg),
		    "run %zu: %s (%s)%s: %d users, scale %g, accel x%g, compression %s, %.0f s "
		    "measured",
		    i + 1, r->id, label, i == in->ref ? ", the reference" : "", r->users, r->scale,
		    r->accel, mb_summary_compression(r), r->measured_s);
		mb_table_set_heading(t, c_run0 + (int)i, sh, lg);
		mb_table_set_priority(t, c_run0 + (int)i, 100 - (int)i);
	}
	int dc = c_diff0;
	for (size_t i = 0; i < in->n; i++) {
		if (i == in->ref)
			continue;
		snprintf(sh, sizeof(sh), "%zu vs %zu", i + 1, in->ref + 1);
		snprintf(
		    lg, sizeof(lg),
		    "%zu vs %zu: run %zu against run %zu, in %% (\"/UE\": per user-equivalent, "
		    "the loads differ)",
		    i + 1, in->ref + 1, i + 1, in->ref + 1);
		mb_table_set_heading(t, dc, sh, lg);
		mb_table_set_priority(t, dc, 80 - (int)i);
		dc++;
	}
	static const char *const hdr[] = {"server platform", "engine", "client mode", "SMT",
					  "scenario",	     "target"};
	for (int h = 0; h < 6; h++) {
		int row;
		if ((rc = mb_table_add_row(t, hdr[h], MB_ROW_HEADER, &row)))
			goto fail;
		for (int c = 0; c < npub; c++) {
			const struct mb_published_column *pc = &sc->columns[c];
			const char *v = h == 0	 ? pc->platform
					: h == 1 ? pc->engine
					: h == 2 ? pc->client
					: h == 3 ? smt_str(pc->smt)
					: h == 4 ? sc->name
						 : "n/a";
			mb_table_set_cell(t, row, c, v);
		}
		for (size_t i = 0; i < in->n; i++) {
			const struct mb_run_summary *r = in->runs[i];
			const char *tg = target_of(in, i);
			const char *v = h == 0	 ? r->platform
					: h == 1 ? r->engine
					: h == 2 ? r->client_mode
					: h == 3 ? smt_str(r->smt)
					: h == 4 ? r->scenario
						 : (tg ? tg : "n/a");
			mb_table_set_cell(t, row, c_run0 + (int)i, v[0] ? v : "n/a");
		}
	}
	if ((rc = mb_table_add_row(t, "", MB_ROW_SEPARATOR, NULL)))
		goto fail;
	for (int id = 0; id < MB_PUBLISHED_COUNT + MB_RX_COUNT; id++) {
		bool is_x = id >= MB_PUBLISHED_COUNT;
		enum mb_runcmp_extra x = (enum mb_runcmp_extra)(id - MB_PUBLISHED_COUNT);
		int row;
		if ((rc = mb_table_add_row(t, is_x ? x_label[x] : mb_counters[id].label,
					   MB_ROW_NORMAL, &row)))
			goto fail;
		mb_table_set_tag(t, row, is_x ? 1000 + (int)x : id);
		for (int c = 0; c < npub && !is_x; c++) {
			const struct mb_published_column *pc = &sc->columns[c];
			mb_format_value((enum mb_counter_id)id, pc->has[id], pc->value[id], buf,
					sizeof(buf));
			mb_table_set_cell(t, row, c, buf);
		}
		for (int c = 0; c < npub && is_x; c++)
			mb_table_set_cell(t, row, c, x == MB_RX_UE ? "8,000" : "n/a");
		for (size_t i = 0; i < in->n; i++) {
			const struct mb_run_summary *r = in->runs[i];
			if (is_x) {
				double v;
				bool has = mb_runcmp_extra(r, x, &v);
				if (has)
					mb_format_number(v, x_dec[x], buf, sizeof(buf));
				else
					snprintf(buf, sizeof(buf), "n/a");
			} else {
				mb_format_value((enum mb_counter_id)id, r->has[id], r->avg[id], buf,
						sizeof(buf));
			}
			mb_table_set_cell(t, row, c_run0 + (int)i, buf);
		}
		dc = c_diff0;
		for (size_t i = 0; i < in->n; i++) {
			if (i == in->ref)
				continue;
			double pct = 0;
			bool per_ue = false;
			bool ok =
			    mb_runcmp_diff(ref, in->runs[i], is_x ? -1 : id, x, &pct, &per_ue);
			fmt_pct(ok, pct, per_ue, buf, sizeof(buf));
			mb_table_set_cell(t, row, dc++, buf);
		}
	}
	*out = t;
	return 0;
fail:
	mb_table_destroy(t);
	return rc;
}

static json_t *num_or_null(bool has, double v) { return has ? json_real(v) : json_null(); }

json_t *mb_runcmp_json(const struct mb_runcmp_input *in)
{
	json_t *o = json_object();
	json_t *runs = json_array(), *diffs = json_array(), *warn = json_array();
	json_object_set_new(o, "schema", json_string("mailbench-compare/1"));
	json_object_set_new(o, "reference", json_integer((json_int_t)in->ref + 1));
	json_object_set_new(o, "runs", runs);
	json_object_set_new(o, "differences", diffs);
	json_object_set_new(o, "warnings", warn);
	for (size_t i = 0; i < in->n; i++) {
		const struct mb_run_summary *r = in->runs[i];
		json_t *c = json_object();
		for (int id = 0; id < MB_COUNTER_COUNT; id++)
			json_object_set_new(c, mb_counters[id].key,
					    num_or_null(r->has[id], r->avg[id]));
		for (int x = 0; x < MB_RX_COUNT; x++) {
			double v;
			bool has = mb_runcmp_extra(r, (enum mb_runcmp_extra)x, &v);
			json_object_set_new(c, x_key[x], num_or_null(has, v));
		}
		const char *tg = target_of(in, i);
		json_array_append_new(
		    runs, json_pack("{s:I,s:s,s:s,s:s,s:o,s:i,s:f,s:f,s:b,s:f,s:o}", "run",
				    (json_int_t)i + 1, "id", r->id, "scenario", r->scenario,
				    "client_mode", r->client_mode, "target",
				    tg ? json_string(tg) : json_null(), "users", r->users, "accel",
				    r->accel, "scale", r->scale, "compression", r->compression,
				    "user_equivalents", mb_runcmp_ue(r), "figures", c));
		if (i == in->ref)
			continue;
		json_t *d = json_object(), *pu = json_array();
		for (int id = 0; id < MB_COUNTER_COUNT + MB_RX_COUNT; id++) {
			bool is_x = id >= MB_COUNTER_COUNT;
			enum mb_runcmp_extra x = (enum mb_runcmp_extra)(id - MB_COUNTER_COUNT);
			double pct;
			bool per_ue = false;
			bool ok =
			    mb_runcmp_diff(in->runs[in->ref], r, is_x ? -1 : id, x, &pct, &per_ue);
			const char *key = is_x ? x_key[x] : mb_counters[id].key;
			json_object_set_new(d, key, num_or_null(ok, ok ? round(pct * 10) / 10 : 0));
			if (ok && per_ue)
				json_array_append_new(pu, json_string(key));
		}
		json_array_append_new(diffs,
				      json_pack("{s:I,s:I,s:o,s:o}", "run", (json_int_t)i + 1, "vs",
						(json_int_t)in->ref + 1, "pct", d, "per_ue", pu));
	}
	char buf[8192];
	mb_runcmp_warnings(in, buf, sizeof(buf));
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		json_array_append_new(warn, json_string(line));
	return o;
}

/* A row's counter key where it has one (NULL: its label). */
static const char *row_key(const struct mb_table *t, int row, void *arg)
{
	(void)arg;
	int tag = mb_table_tag(t, row);
	return tag >= 1000 ? x_key[tag - 1000] : tag >= 0 ? mb_counters[tag].key : NULL;
}

int mb_runcmp_csv(const struct mb_table *t, FILE *f) { return mb_table_csv(t, f, row_key, NULL); }
