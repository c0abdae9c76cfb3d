/* report/htmlsec.c: the report's sections, in page order: the runs'
 * facts, the published comparison, the charts (data for uPlot), the
 * actions, the storage test, the capacity curve and the findings.  Each
 * writes static HTML through htmlout.c; charts add their data to the
 * page's JSON blob.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "report/compare.h"
#include "report/html_int.h"

const char *mb__html_run_target(const json_t *j, char *buf, size_t len)
{
	return mb_runcmp_target_of(j, buf, len);
}

void mb__html_sec_facts(struct rep *r)
{
	mb__html_out(r, "<section id=\"facts\"><h2>Runs</h2>\n");
	if (r->nruns == 0) {
		mb__html_out(r, "<p>No run summaries among the documents.</p></section>\n");
		return;
	}
	mb__html_out(r, "<div class=\"scroll\"><table class=\"facts\"><thead><tr><th></th>");
	for (size_t i = 0; i < r->nruns; i++)
		mb__html_out(r, "<th>run %zu</th>", i + 1);
	mb__html_out(r, "</tr></thead><tbody>\n");
	static const struct {
		const char *label;
		const char *paths[3];
	} facts[] = {
	    {"run id", {"id"}},
	    {"started (UTC)", {"started"}},
	    {"source file", {NULL}},
	    {"machine", {"machine", "header.machine"}},
	    {"kernel (server platform)", {"header.platform", "platform"}},
	    {"versions (engine)", {"header.engine", "engine"}},
	    {"scenario", {"scenario.title", "scenario.name"}},
	    {"client mode", {"header.client_mode"}},
	    {"target", {NULL}},
	    {"users", {"parameters.users"}},
	    {"scale", {"parameters.scale"}},
	    {"acceleration", {"parameters.accel"}},
	    {"user-equivalents", {NULL}},
	    {"seed", {"parameters.seed", "seed"}},
	    {"database cache (MB, in use)", {"counters.db_cache_mb"}},
	    {"database cache (MB, configured)", {"parameters.cache_mb", "parameters.db_cache_mb"}},
	    {"page size", {"parameters.page_kb"}},
	    {"SMT", {"header.smt"}},
	    {"duration (s)", {"parameters.duration_s"}},
	    {"warm-up (s)", {"parameters.warmup_s"}},
	    {"measured (s)", {"parameters.measured_s"}},
	    {"storage test during the load", {"parameters.storage_test"}},
	    {"verdict", {"verdict"}},
	    {"failure", {"failure"}},
	};
	for (size_t k = 0; k < sizeof(facts) / sizeof(facts[0]); k++) {
		mb__html_out(r, "<tr><th>%s</th>", facts[k].label);
		for (size_t i = 0; i < r->n; i++) {
			const struct doc *d = &r->d[i];
			if (d->kind != DOC_RUN)
				continue;
			char buf[512];
			const char *v = NULL;
			if (!strcmp(facts[k].label, "source file")) {
				v = d->name;
			} else if (!strcmp(facts[k].label, "target")) {
				v = mb__html_run_target(d->j, buf, sizeof(buf));
			} else if (!strcmp(facts[k].label, "user-equivalents")) {
				mb_format_number(mb_runcmp_ue(d->sum), 0, buf, sizeof(buf));
				v = buf;
			} else if (!strcmp(facts[k].label, "page size")) {
				v = mb__html_jtext(mb__html_jpath(d->j, "parameters.page_kb"), buf,
						   sizeof(buf));
				if (!v) {
					/* the engine header names it: "..., 32 KB pages, ..." */
					const char *e = d->sum->engine, *p = strstr(e, " KB pages");
					if (p) {
						const char *s = p;
						while (s > e && s[-1] >= '0' && s[-1] <= '9')
							s--;
						snprintf(buf, sizeof(buf), "%.*s KB", (int)(p - s),
							 s);
						v = buf;
					}
				} else {
					strncat(buf, " KB", sizeof(buf) - strlen(buf) - 1);
				}
			} else if (!strcmp(facts[k].label, "SMT")) {
				v = d->sum->smt < 0 ? NULL : d->sum->smt ? "on" : "off";
			} else {
				for (int p = 0; p < 3 && facts[k].paths[p] && !v; p++)
					v = mb__html_jtext(mb__html_jpath(d->j, facts[k].paths[p]),
							   buf, sizeof(buf));
			}
			mb__html_td_text(r, v);
		}
		mb__html_out(r, "</tr>\n");
	}
	mb__html_out(r, "</tbody></table></div></section>\n");
}

void mb__html_sec_compare(struct rep *r, const struct mb_scenario *sc)
{
	mb__html_out(r, "<section id=\"compare\"><h2>Comparison table</h2>\n");
	if (r->nruns == 0) {
		mb__html_out(r, "<p>No run summaries among the documents.</p></section>\n");
		return;
	}
	mb__html_out(r, "<p>Run averages after the warm-up beside the published columns");
	if (sc)
		mb__html_out(r, " of <em>"), mb__html_esc(r, sc->results_title),
		    mb__html_out(r, "</em>");
	mb__html_out(r,
		     ". Differences are against run 1, in percent; where the runs offered "
		     "different loads, rates and processor time are compared per user-equivalent "
		     "(marked /UE).</p>\n");
	struct mb_runcmp_input in = {sc, r->runs, r->targets, r->nruns, 0};
	char warn[4096];
	if (mb_runcmp_warnings(&in, warn, sizeof(warn)) > 0) {
		mb__html_out(r, "<pre class=\"warn\">");
		mb__html_esc(r, warn);
		mb__html_out(r, "</pre>\n");
	}
	struct mb_table *t;
	if (mb_runcmp_build(&in, &t) == 0) {
		mb__html_table(r, t, "cmp");
		mb_table_destroy(t);
	}
	mb__html_out(r, "</section>\n");
}

/* One chart: tables[i] = [xs, ys...] (ascending xs), labels of every y. */
static json_t *chart_new(struct rep *r, const char *title, const char *unit, const char *xlabel,
			 bool points)
{
	json_t *c = json_pack("{s:s,s:s,s:s,s:s,s:b,s:[],s:[]}", "id", "", "title", title, "unit",
			      unit, "xlabel", xlabel, "points", points, "tables", "labels");
	char id[32];
	snprintf(id, sizeof(id), "chart%d", ++r->chart_no);
	json_object_set_new(c, "id", json_string(id));
	json_array_append(r->charts, c);
	json_decref(c);
	mb__html_out(r, "<figure class=\"chart\"><div id=\"%s\" class=\"plot\"></div><figcaption>",
		     id);
	mb__html_esc(r, title);
	mb__html_out(r, " (%s)</figcaption></figure>\n", unit);
	return c;
}

static void chart_label(json_t *c, const char *label)
{
	json_array_append_new(json_object_get(c, "labels"), json_string(label));
}

/* Columns of one run's series: x = load time, y = the named arrays. */
static int add_run_table(json_t *c, const json_t *xs, const json_t *const *ys, int ny)
{
	size_t n = json_array_size(xs);
	json_t *tab = json_array();
	json_t *cx = json_array();
	json_array_append_new(tab, cx);
	json_t *cy[4];
	for (int k = 0; k < ny; k++) {
		cy[k] = json_array();
		json_array_append_new(tab, cy[k]);
	}
	double last = -INFINITY;
	int pts = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(xs, i);
		if (!json_is_number(x) || json_number_value(x) <= last)
			continue; /* uPlot wants ascending x */
		last = json_number_value(x);
		json_array_append(cx, (json_t *)x);
		for (int k = 0; k < ny; k++) {
			json_t *v = json_array_get(ys[k], i);
			json_array_append_new(cy[k],
					      json_is_number(v) ? json_copy(v) : json_null());
			pts += json_is_number(v);
		}
	}
	json_array_append_new(json_object_get(c, "tables"), tab);
	return pts;
}

void mb__html_sec_charts(struct rep *r)
{
	mb__html_out(r, "<section id=\"charts\"><h2>Counters over time</h2>\n");
	bool any = false;
	for (size_t i = 0; i < r->n; i++)
		any |= r->d[i].kind == DOC_RUN && mb__html_jpath(r->d[i].j, "series.t");
	if (!any) {
		mb__html_out(r,
			     "<p>n/a: the run documents carry no time series (written by mailbench "
			     "run --json and saved runs of this version).</p></section>\n");
		return;
	}
	mb__html_out(
	    r, "<p>One point per second (latency: per load-engine window), x in seconds since "
	       "the load started; the warm-up is included.</p>\n");
	static const struct {
		const char *title, *unit;
		const char *keys[2];
		const char *names[2];
	} defs[] = {
	    {"% processor time", "%", {"processor_pct", "machine_cpu_pct"}, {"store", "machine"}},
	    {"RPC operations/s", "/s", {"rpc_ops_per_s"}, {""}},
	    {"network usage (Kbit/s)", "Kbit/s", {"network_kbit_per_s"}, {""}},
	    {"database disk transfers/s", "/s", {"db_transfers_per_s"}, {""}},
	    {"log writes/s", "/s", {"log_writes_per_s"}, {""}},
	};
	for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++) {
		json_t *c = chart_new(r, defs[k].title, defs[k].unit, "s", false);
		for (size_t i = 0; i < r->n; i++) {
			const struct doc *d = &r->d[i];
			const json_t *xs = mb__html_jpath(d->j, "series.t");
			if (d->kind != DOC_RUN || !xs)
				continue;
			const json_t *ys[2];
			int ny = 0;
			for (int m = 0; m < 2 && defs[k].keys[m]; m++) {
				char p[96];
				snprintf(p, sizeof(p), "series.counters.%s", defs[k].keys[m]);
				const json_t *a = mb__html_jpath(d->j, p);
				if (!json_is_array(a))
					continue;
				ys[ny++] = a;
				char label[160];
				snprintf(label, sizeof(label), "run %d%s%s", d->run_no,
					 defs[k].names[m][0] ? " " : "", defs[k].names[m]);
				chart_label(c, label);
			}
			if (ny)
				add_run_table(c, xs, ys, ny);
		}
	}
	json_t *c =
	    chart_new(r, "client latency: RPC round trip p50 / p95 / p99", "ms", "s", false);
	for (size_t i = 0; i < r->n; i++) {
		const struct doc *d = &r->d[i];
		const json_t *xs = mb__html_jpath(d->j, "series.latency.t");
		if (d->kind != DOC_RUN || !json_is_array(xs))
			continue;
		static const char *const pk[] = {"p50_ms", "p95_ms", "p99_ms"};
		const json_t *ys[3];
		for (int m = 0; m < 3; m++) {
			char p[64], label[64];
			snprintf(p, sizeof(p), "series.latency.%s", pk[m]);
			ys[m] = mb__html_jpath(d->j, p);
			snprintf(label, sizeof(label), "run %d p%.2s", d->run_no, pk[m] + 1);
			chart_label(c, label);
		}
		add_run_table(c, xs, ys, 3);
	}
	mb__html_out(r, "</section>\n");
}

void mb__html_sec_actions(struct rep *r)
{
	mb__html_out(r, "<section id=\"actions\"><h2>Actions</h2>\n");
	if (r->nruns == 0) {
		mb__html_out(r, "<p>No run summaries among the documents.</p></section>\n");
		return;
	}
	mb__html_out(r, "<p>Counts over the whole load; response times (ms) after the warm-up, "
			"percentiles of the merged histograms.</p>\n");
	mb__html_out(
	    r,
	    "<div class=\"scroll\"><table class=\"acts\"><thead><tr><th rowspan=\"2\">action</th>");
	for (size_t i = 0; i < r->nruns; i++)
		mb__html_out(r, "<th colspan=\"6\">run %zu</th>", i + 1);
	mb__html_out(r, "</tr><tr>");
	for (size_t i = 0; i < r->nruns; i++)
		mb__html_out(
		    r, "<th>done</th><th>failed</th><th>/user-day</th><th>p50</th><th>p95</th>"
		       "<th>p99</th>");
	mb__html_out(r, "</tr></thead><tbody>\n");
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		mb__html_out(r, "<tr><th>%s</th>", mb_actions[a].label);
		for (size_t i = 0; i < r->nruns; i++) {
			const struct mb_action_figures *f = &r->runs[i]->actions[a];
			mb__html_td_num(r, f->has_counts, f->done, 0);
			mb__html_td_num(r, f->has_counts, f->failed, 0);
			mb__html_td_num(r, f->has_per_user_day, f->per_user_day, 2);
			mb__html_td_num(r, f->latency.has, f->latency.p50_ms, 1);
			mb__html_td_num(r, f->latency.has, f->latency.p95_ms, 1);
			mb__html_td_num(r, f->latency.has, f->latency.p99_ms, 1);
		}
		mb__html_out(r, "</tr>\n");
	}
	mb__html_out(r, "<tr class=\"total\"><th>all actions</th>");
	for (size_t i = 0; i < r->nruns; i++) {
		const struct mb_latency *l = &r->runs[i]->action_latency;
		double fails;
		bool hf = mb_runcmp_extra(r->runs[i], MB_RX_FAILED, &fails);
		mb__html_td_num(r, l->has, (double)l->count, 0);
		mb__html_td_num(r, hf, fails, 0);
		mb__html_out(r, "<td></td>");
		mb__html_td_num(r, l->has, l->p50_ms, 1);
		mb__html_td_num(r, l->has, l->p95_ms, 1);
		mb__html_td_num(r, l->has, l->p99_ms, 1);
	}
	mb__html_out(r, "</tr></tbody></table></div>\n");
	mb__html_out(r, "<p>LoadSim score (95th percentile of all action response times): ");
	for (size_t i = 0; i < r->nruns; i++) {
		char b[32] = "n/a";
		if (r->runs[i]->has_score)
			mb_format_number(r->runs[i]->score_ms, 0, b, sizeof(b));
		mb__html_out(r, "%srun %zu: %s ms", i ? "; " : "", i + 1, b);
	}
	mb__html_out(r, ".</p></section>\n");
}

void mb__html_sec_storage(struct rep *r)
{
	mb__html_out(r, "<section id=\"storage\"><h2>Storage test</h2>\n");
	struct mb_storage_cfg *st = calloc(1, sizeof(*st));
	bool have_st = st && mb_storage_cfg_load("storage", st, NULL) == 0;
	mb__html_out(
	    r, "<div class=\"scroll\"><table class=\"stor\"><thead><tr><th>source</th>"
	       "<th>threads</th><th>total IOPS</th><th>db read IOPS</th><th>db write IOPS</th>"
	       "<th>log write IOPS</th><th>db read avg / p95 / p99 (ms)</th>"
	       "<th>log write avg / p95 / p99 (ms)</th><th>pass</th></tr></thead><tbody>\n");
	if (have_st) {
		for (int k = 0; k < st->ref_count; k++) {
			mb__html_out(r, "<tr class=\"pub\"><td>published</td>");
			mb__html_td_num(r, true, st->ref[k].threads, 0);
			mb__html_td_num(r, true, st->ref[k].iops, 0);
			mb__html_out(r, "<td class=\"n\">n/a</td><td class=\"n\">n/a</td><td "
					"class=\"n\">n/a</td>");
			mb__html_out(
			    r,
			    "<td class=\"n\">%.2f / n/a / n/a</td><td class=\"n\">%.2f / n/a / "
			    "n/a</td><td></td></tr>\n",
			    st->ref[k].db_read_ms, st->ref[k].log_write_ms);
		}
	}
	int measured = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct doc *d = &r->d[i];
		if (d->kind != DOC_STORAGE)
			continue;
		const json_t *runs = json_object_get(d->j, "runs");
		for (size_t k = 0; k < json_array_size(runs); k++) {
			const json_t *x = json_array_get(runs, k);
			bool h;
			mb__html_out(r, "<tr><td>");
			mb__html_esc(r, d->name);
			mb__html_out(r, "</td>");
			static const char *const keys[] = {"threads", "iops", "db_read_iops",
							   "db_write_iops", "log_write_iops"};
			for (int m = 0; m < 5; m++) {
				double v = mb__html_jnum(x, keys[m], &h);
				mb__html_td_num(r, h, v, 0);
			}
			static const char *const lk[] = {"db_read_latency_ms",
							 "log_write_latency_ms"};
			for (int m = 0; m < 2; m++) {
				char p[64], a[32] = "n/a", b[32] = "n/a", c[32] = "n/a";
				double v;
				snprintf(p, sizeof(p), "%s.avg", lk[m]);
				if ((v = mb__html_jnum(x, p, &h)), h)
					snprintf(a, sizeof(a), "%.2f", v);
				snprintf(p, sizeof(p), "%s.p95", lk[m]);
				if ((v = mb__html_jnum(x, p, &h)), h)
					snprintf(b, sizeof(b), "%.2f", v);
				snprintf(p, sizeof(p), "%s.p99", lk[m]);
				if ((v = mb__html_jnum(x, p, &h)), h)
					snprintf(c, sizeof(c), "%.2f", v);
				mb__html_out(r, "<td class=\"n\">%s / %s / %s</td>", a, b, c);
			}
			const json_t *pass = json_object_get(x, "pass");
			mb__html_out(r, "<td>%s</td></tr>\n",
				     json_is_boolean(pass) ? (json_is_true(pass) ? "pass" : "FAIL")
							   : "n/a");
			measured++;
		}
	}
	for (size_t i = 0; i < r->nruns; i++) {
		const struct mb_run_summary *s = r->runs[i];
		if (!s->storage_test)
			continue;
		mb__html_out(r, "<tr><td>run %zu (during the load)</td><td class=\"n\">n/a</td>",
			     i + 1);
		mb__html_td_num(r, s->has[MB_C_STRESS_IOPS], s->avg[MB_C_STRESS_IOPS], 0);
		mb__html_out(
		    r, "<td class=\"n\">n/a</td><td class=\"n\">n/a</td><td class=\"n\">n/a</td>");
		char a[32] = "n/a", b[32] = "n/a";
		if (s->has[MB_C_STRESS_READ_MS])
			snprintf(a, sizeof(a), "%.2f", s->avg[MB_C_STRESS_READ_MS]);
		if (s->has[MB_C_STRESS_LOG_MS])
			snprintf(b, sizeof(b), "%.2f", s->avg[MB_C_STRESS_LOG_MS]);
		mb__html_out(r,
			     "<td class=\"n\">%s / n/a / n/a</td><td class=\"n\">%s / n/a / "
			     "n/a</td><td>%s</td></tr>\n",
			     a, b, mb_verdict_str(s->storage_verdict));
		measured++;
	}
	mb__html_out(r, "</tbody></table></div>\n");
	if (have_st) {
		mb__html_out(r, "<p class=\"note\">Published: ");
		mb__html_esc(r, st->ref_heading);
		mb__html_out(
		    r,
		    ". Pass limits: database read average under %g ms, log write average under "
		    "%g ms.</p>\n",
		    st->db_read_avg_ms_max, st->log_write_avg_ms_max);
	}
	if (!measured)
		mb__html_out(
		    r, "<p>No storage-test results among the documents (mailbench storage-test "
		       "--json FILE, or mailbench run --storage-test).</p>\n");
	free(st);
	mb__html_out(r, "</section>\n");
}

/* Capacity steps sorted by user-equivalents (the bisection adds them mb__html_out
 * of order). */
static int step_cmp(const void *a, const void *b)
{
	bool h;
	double x = mb__html_jnum(*(json_t *const *)a, "ue", &h),
	       y = mb__html_jnum(*(json_t *const *)b, "ue", &h);
	return x < y ? -1 : x > y;
}

void mb__html_sec_capacity(struct rep *r)
{
	mb__html_out(r, "<section id=\"capacity\"><h2>Capacity</h2>\n");
	int ncap = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct doc *d = &r->d[i];
		if (d->kind != DOC_CAPACITY)
			continue;
		ncap++;
		char b1[256], b2[256], b3[256];
		const char *sc =
		    mb__html_jtext(mb__html_jpath(d->j, "scenario.title"), b1, sizeof(b1));
		const char *lim =
		    mb__html_jtext(mb__html_jpath(d->j, "limit.text"), b2, sizeof(b2));
		const char *tg = mb__html_jtext(mb__html_jpath(d->j, "target"), b3, sizeof(b3));
		mb__html_out(r, "<h3>");
		mb__html_esc(r, sc ? sc : "capacity search");
		mb__html_out(r, ": limit ");
		mb__html_esc(r, lim ? lim : "n/a");
		mb__html_out(r, "</h3>\n<p class=\"answer\">");
		const char *ans = json_string_value(mb__html_jpath(d->j, "answer.text"));
		mb__html_esc(r, ans ? ans : "n/a: the search did not finish");
		mb__html_out(r, "</p>\n<p class=\"note\">source ");
		mb__html_esc(r, d->name);
		mb__html_out(r, "; target ");
		mb__html_esc(r, tg ? tg : "n/a");
		mb__html_out(
		    r, "; each step a fresh load with its own warm-up and measured window.</p>\n");
		const json_t *steps = json_object_get(d->j, "steps");
		size_t ns = json_array_size(steps);
		json_t **sorted = calloc(ns ? ns : 1, sizeof(*sorted));
		if (!sorted)
			continue;
		for (size_t k = 0; k < ns; k++)
			sorted[k] = json_array_get(steps, k);
		qsort(sorted, ns, sizeof(*sorted), step_cmp);
		/* the curve: latency against load, and the resources */
		json_t *xs = json_array();
		json_t *ys[6];
		for (int m = 0; m < 6; m++)
			ys[m] = json_array();
		static const char *const keys[6] = {"score_ms",	     "rpc_p50_ms",
						    "rpc_p95_ms",    "rpc_p99_ms",
						    "store_cpu_pct", "machine_cpu_pct"};
		double last = -INFINITY;
		for (size_t k = 0; k < ns; k++) {
			bool h;
			double ue = mb__html_jnum(sorted[k], "ue", &h);
			if (!h || ue <= last)
				continue;
			last = ue;
			json_array_append_new(xs, json_real(ue));
			for (int m = 0; m < 6; m++) {
				double v = mb__html_jnum(sorted[k], keys[m], &h);
				json_array_append_new(ys[m], h ? json_real(v) : json_null());
			}
		}
		char title[512];
		snprintf(title, sizeof(title), "%s: response time against load",
			 sc ? sc : "capacity");
		json_t *c = chart_new(r, title, "ms", "user-equivalents", true);
		static const char *const lab[6] = {"LoadSim score", "RPC p50",	   "RPC p95",
						   "RPC p99",	    "store CPU %", "machine CPU %"};
		for (int m = 0; m < 4; m++)
			chart_label(c, lab[m]);
		add_run_table(c, xs, (const json_t *const *)ys, 4);
		snprintf(title, sizeof(title), "%s: processor time against load",
			 sc ? sc : "capacity");
		c = chart_new(r, title, "%", "user-equivalents", true);
		chart_label(c, lab[4]);
		chart_label(c, lab[5]);
		add_run_table(c, xs, (const json_t *const *)ys + 4, 2);
		json_decref(xs);
		for (int m = 0; m < 6; m++)
			json_decref(ys[m]);
		/* every step, in the order it ran */
		mb__html_out(
		    r,
		    "<div class=\"scroll\"><table class=\"cap\"><thead><tr><th>step</th>"
		    "<th>phase</th><th>users</th><th>accel</th><th>UE</th><th>score (ms)</th>"
		    "<th>RPC p50 / p95 / p99 (ms)</th><th>store CPU %%</th><th>machine CPU %%</th>"
		    "<th>RPC ops/s achieved</th><th>expected</th><th>actions done / "
		    "scheduled</th><th>failed</th><th>saturated</th><th>within limit</th></tr>"
		    "</thead><tbody>\n");
		for (size_t k = 0; k < ns; k++) {
			const json_t *s = json_array_get(steps, k);
			bool h, h2;
			char b[64];
			mb__html_out(r, "<tr>");
			mb__html_td_num(r, true, (double)k + 1, 0);
			char ph[128];
			snprintf(ph, sizeof(ph), "%s%s%s",
				 mb__html_jtext(json_object_get(s, "phase"), b, sizeof(b)),
				 json_is_true(json_object_get(s, "repeat")) ? ", run again" : "",
				 json_is_true(json_object_get(s, "disturbed"))
				     ? ", disturbed (steal)"
				     : "");
			mb__html_td_text(r, ph);
			double v = mb__html_jnum(s, "users", &h);
			mb__html_td_num(r, h, v, 0);
			v = mb__html_jnum(s, "accel", &h);
			mb__html_td_num(r, h, v, 2);
			v = mb__html_jnum(s, "ue", &h);
			mb__html_td_num(r, h, v, 0);
			v = mb__html_jnum(s, "score_ms", &h);
			mb__html_td_num(r, h, v, 0);
			double p50 = mb__html_jnum(s, "rpc_p50_ms", &h);
			bool hp95, hp99;
			double p95 = mb__html_jnum(s, "rpc_p95_ms", &hp95),
			       p99 = mb__html_jnum(s, "rpc_p99_ms", &hp99);
			if (h)
				mb__html_out(r, "<td class=\"n\">%.1f / %.1f / %.1f</td>", p50, p95,
					     p99);
			else
				mb__html_out(r, "<td class=\"n\">n/a</td>");
			v = mb__html_jnum(s, "store_cpu_pct", &h);
			mb__html_td_num(r, h, v, 1);
			v = mb__html_jnum(s, "machine_cpu_pct", &h);
			mb__html_td_num(r, h, v, 1);
			v = mb__html_jnum(s, "rpc_ops_per_s", &h);
			mb__html_td_num(r, h, v, 0);
			v = mb__html_jnum(s, "rpc_ops_expected_per_s", &h);
			mb__html_td_num(r, h, v, 0);
			double dn = mb__html_jnum(s, "actions_done", &h),
			       sch = mb__html_jnum(s, "actions_scheduled", &h2);
			if (h && h2)
				mb__html_out(r, "<td class=\"n\">%.0f / %.0f</td>", dn, sch);
			else
				mb__html_out(r, "<td class=\"n\">n/a</td>");
			v = mb__html_jnum(s, "failed_actions", &h);
			mb__html_td_num(r, h, v, 0);
			mb__html_td_text(
			    r, mb__html_jtext(json_object_get(s, "saturated"), b, sizeof(b)));
			const json_t *p = json_object_get(s, "pass");
			const char *why = json_string_value(json_object_get(s, "limited_by"));
			char pb[160];
			snprintf(pb, sizeof(pb), "%s%s%s",
				 json_is_true(p)    ? "yes"
				 : json_is_false(p) ? "no"
						    : "n/a",
				 why ? ": " : "", why ? why : "");
			mb__html_td_text(r, pb);
			mb__html_out(r, "</tr>\n");
		}
		mb__html_out(r, "</tbody></table></div>\n");
		free(sorted);
	}
	if (!ncap)
		mb__html_out(
		    r, "<p>No capacity search among the documents (mailbench capacity -s SCENARIO "
		       "--json FILE).</p>\n");
	mb__html_out(r, "</section>\n");
}

static double per_ue(const struct mb_run_summary *s, enum mb_counter_id id)
{
	return s->avg[id] / mb_runcmp_ue(s);
}

static void finding_row(struct rep *r, const char *what, const char *published,
			const char *measured, const char *verdict)
{
	mb__html_out(r, "<tr><td>");
	mb__html_esc(r, what);
	mb__html_out(r, "</td><td>");
	mb__html_esc(r, published);
	mb__html_out(r, "</td><td>");
	mb__html_esc(r, measured);
	mb__html_out(r, "</td><td class=\"v\">");
	mb__html_esc(r, verdict);
	mb__html_out(r, "</td></tr>\n");
}

void mb__html_sec_findings(struct rep *r)
{
	mb__html_out(r,
		     "<section id=\"findings\"><h2>Published findings, checked</h2>\n"
		     "<div class=\"scroll\"><table class=\"find\"><thead><tr><th>finding</th>"
		     "<th>published</th><th>these runs</th><th>verdict</th></tr></thead><tbody>\n");
	char m[1024];
	/* 1. compression halves network usage */
	bool done = false;
	for (size_t i = 0; i < r->nruns; i++) {
		for (size_t k = 0; k < r->nruns; k++) {
			const struct mb_run_summary *off = r->runs[i], *on = r->runs[k];
			/* one scenario on one target that has compression */
			if (strcmp(mb_summary_compression(off), "off") ||
			    strcmp(mb_summary_compression(on), "on") ||
			    strcmp(off->scenario, on->scenario) ||
			    strcmp(off->target[0] ? off->target : "mbstore",
				   on->target[0] ? on->target : "mbstore") ||
			    !off->has[MB_C_NETWORK] || !on->has[MB_C_NETWORK] ||
			    off->avg[MB_C_NETWORK] <= 0)
				continue;
			double ratio = per_ue(on, MB_C_NETWORK) / per_ue(off, MB_C_NETWORK);
			double cpu = NAN;
			if (on->has[MB_C_PROCESSOR_PCT] && off->has[MB_C_PROCESSOR_PCT] &&
			    off->avg[MB_C_PROCESSOR_PCT] > 0)
				cpu = (per_ue(on, MB_C_PROCESSOR_PCT) /
					   per_ue(off, MB_C_PROCESSOR_PCT) -
				       1) *
				      100;
			snprintf(
			    m, sizeof(m),
			    "run %zu (off) %.0f Kbit/s -> run %zu (on) %.0f Kbit/s%s: %.2f x per "
			    "user-equivalent; store processor time %+.0f%% per UE",
			    i + 1, off->avg[MB_C_NETWORK], k + 1, on->avg[MB_C_NETWORK],
			    mb_runcmp_ue(on) != mb_runcmp_ue(off) ? " (loads differ)" : "", ratio,
			    cpu);
			finding_row(r, "RPC compression halves network usage",
				    "3,154 -> 1,594 Kbit/s online (0.51 x); 3,613 -> 1,765 cached "
				    "(0.49 x), at no visible CPU cost",
				    m,
				    ratio <= 0.6  ? "reproduced (0.6 x or less)"
				    : ratio < 0.9 ? "partly: network falls, but by less than half"
						  : "not reproduced");
			done = true;
		}
	}
	if (!done)
		finding_row(r, "RPC compression halves network usage",
			    "3,154 -> 1,594 Kbit/s online; 3,613 -> 1,765 cached",
			    "not checked: needs a run with compression off and one with it on, of "
			    "one scenario",
			    "n/a");
	/* 2. a larger database cache cuts disk transfers */
	done = false;
	for (size_t i = 0; i < r->nruns; i++) {
		for (size_t k = 0; k < r->nruns; k++) {
			const struct mb_run_summary *a = r->runs[i], *b = r->runs[k];
			if (!a->has[MB_C_DB_CACHE_MB] || !b->has[MB_C_DB_CACHE_MB] ||
			    !a->has[MB_C_DB_TRANSFERS] || !b->has[MB_C_DB_TRANSFERS] ||
			    strcmp(a->scenario, b->scenario) ||
			    b->avg[MB_C_DB_CACHE_MB] < a->avg[MB_C_DB_CACHE_MB] * 1.03 ||
			    a->avg[MB_C_DB_TRANSFERS] <= 0)
				continue;
			double ch =
			    (per_ue(b, MB_C_DB_TRANSFERS) / per_ue(a, MB_C_DB_TRANSFERS) - 1) * 100;
			snprintf(
			    m, sizeof(m),
			    "run %zu cache %.0f MB: %.0f transfers/s -> run %zu cache %.0f MB: "
			    "%.0f/s (%+.0f%% per user-equivalent)",
			    i + 1, a->avg[MB_C_DB_CACHE_MB], a->avg[MB_C_DB_TRANSFERS], k + 1,
			    b->avg[MB_C_DB_CACHE_MB], b->avg[MB_C_DB_TRANSFERS], ch);
			finding_row(
			    r, "a larger database cache cuts disk transfers",
			    "864 -> 896 MB: 2,088 -> 1,980 transfers/s online (a), (b) (the "
			    "source: about 10% fewer, with engine improvements)",
			    m, ch < 0 ? "reproduced (fewer transfers)" : "not reproduced");
			done = true;
		}
	}
	if (!done)
		finding_row(r, "a larger database cache cuts disk transfers",
			    "864 -> 896 MB: 2,088 -> 1,980 transfers/s",
			    "not checked: needs two runs of one scenario whose database cache "
			    "differs (--scale, or the scenario's cache)",
			    "n/a");
	/* 3. cached against online */
	done = false;
	for (size_t i = 0; i < r->nruns; i++) {
		for (size_t k = 0; k < r->nruns; k++) {
			const struct mb_run_summary *on = r->runs[i], *ca = r->runs[k];
			if (on->mode != MB_MODE_ONLINE || ca->mode != MB_MODE_CACHED)
				continue;
			static const struct {
				enum mb_counter_id id;
				double pub_on, pub_ca;
			} rows[] = {{MB_C_PROCESSOR_PCT, 76, 57},
				    {MB_C_DB_TRANSFERS, 1980, 1355},
				    {MB_C_RPC_OPS, 955, 1193},
				    {MB_C_NETWORK, 1594, 1765}};
			for (size_t q = 0; q < sizeof(rows) / sizeof(rows[0]); q++) {
				enum mb_counter_id id = rows[q].id;
				char what[160], pub[160];
				snprintf(what, sizeof(what), "cached mode against online: %s",
					 mb_counters[id].label);
				double pc = (rows[q].pub_ca / rows[q].pub_on - 1) * 100;
				snprintf(pub, sizeof(pub),
					 "column (b): %g online -> %g cached (%+.0f%%)",
					 rows[q].pub_on, rows[q].pub_ca, pc);
				if (!on->has[id] || !ca->has[id] || on->avg[id] <= 0) {
					finding_row(r, what, pub, "n/a: not measured in both runs",
						    "n/a");
					continue;
				}
				double mc = (per_ue(ca, id) / per_ue(on, id) - 1) * 100;
				snprintf(m, sizeof(m),
					 "run %zu online -> run %zu cached: %+.0f%% per UE", i + 1,
					 k + 1, mc);
				finding_row(r, what, pub, m,
					    (mc < 0) == (pc < 0) ? "same direction"
								 : "opposite direction");
			}
			done = true;
		}
	}
	if (!done)
		finding_row(r, "cached mode against online",
			    "column (b): processor 76 -> 57%, transfers 1,980 -> 1,355/s, RPC ops "
			    "955 -> 1,193/s",
			    "not checked: needs an online run and a cached run", "n/a");
	mb__html_out(
	    r, "</tbody></table></div><p class=\"note\">The published scenarios' user profiles "
	       "differ, so the source did not compare them directly; the cached-against-online "
	       "rows compare per user-equivalent and say only whether the direction agrees. "
	       "Hyper-Threading (76 -> 57%%) needs runs on one machine with SMT off and on: "
	       "not checked here.</p></section>\n");
}
