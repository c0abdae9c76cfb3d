/* sttest_out.c: what `mailbench storage-test` writes: the storage
 * comparison (report/stortable.h, the one model of that table: published
 * rows beside the measured runs) as the text table on stdout and in the
 * --json document with every run's figures and parameters, and an I/O
 * error or checksum mismatch with its file and offset.
 * Invariant: what was not measured prints as n/a (null in JSON); the JSON
 * file is written whole or not at all (mb_json_write_file).
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/counters.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/sampler.h"
#include "report/sttest_int.h"
#include "stress/iomode.h"

/* storage-test's columns of the comparison */
static const enum mb_stor_measure text_cols[] = {
    MB_SM_IOPS,	    MB_SM_DB_READ_S, MB_SM_DB_WRITE_S, MB_SM_LOG_WRITE_S, MB_SM_READ_AVG,
    MB_SM_READ_P95, MB_SM_READ_P99,  MB_SM_READ_MAX,   MB_SM_LOG_AVG,	  MB_SM_LOG_P95,
    MB_SM_LOG_P99,  MB_SM_LOG_MAX,   MB_SM_MBS,	       MB_SM_ERRORS,	  MB_SM_VERDICT};

/* The measured runs as series of the storage comparison, beside the
 * published rows (report/stortable.h: the one model of the table). */
int mb__sttest_build_model(const struct ctx *c, struct mb_stortable **out)
{
	struct mb_stortable *t;
	int rc = mb_stortable_create(&c->cfg, &c->th, &t);
	if (rc)
		return rc;
	for (int i = 0; i < c->nruns && !rc; i++) {
		const struct mb_stress_figures *f = &c->runs[i].f;
		struct mb_stor_series s;
		memset(&s, 0, sizeof(s));
		snprintf(s.name, sizeof(s.name), "%d thr", f->threads);
		const struct {
			enum mb_stor_measure m;
			bool has;
			double v;
		} cells[] = {
		    {MB_SM_THREADS, true, f->threads},
		    {MB_SM_IOPS, true, f->iops},
		    {MB_SM_DB_READ_S, true, f->db_read_iops},
		    {MB_SM_DB_WRITE_S, true, f->db_write_iops},
		    {MB_SM_LOG_WRITE_S, true, f->log_write_iops},
		    {MB_SM_READ_AVG, f->db_read.count > 0, f->db_read.avg},
		    {MB_SM_READ_P95, f->db_read.count > 0, f->db_read.p95},
		    {MB_SM_READ_P99, f->db_read.count > 0, f->db_read.p99},
		    {MB_SM_READ_MAX, f->db_read.count > 0, f->db_read.max},
		    {MB_SM_LOG_AVG, f->log_write.count > 0, f->log_write.avg},
		    {MB_SM_LOG_P95, f->log_write.count > 0, f->log_write.p95},
		    {MB_SM_LOG_P99, f->log_write.count > 0, f->log_write.p99},
		    {MB_SM_LOG_MAX, f->log_write.count > 0, f->log_write.max},
		    {MB_SM_MBS, true,
		     (f->db_read_bytes_s + f->db_write_bytes_s + f->log_write_bytes_s) / 1048576.0},
		    {MB_SM_ERRORS, true, (double)f->errors},
		};
		for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++) {
			s.has[cells[k].m] = cells[k].has;
			s.v[cells[k].m] = cells[k].v;
		}
		/* the storage test's rule: the thresholds, and errors or no I/O fail */
		s.has_verdict = true;
		s.verdict = c->runs[i].pass ? MB_VERDICT_PASS : MB_VERDICT_FAIL;
		s.best = c->best == i;
		rc = mb_stortable_add(t, &s);
	}
	if (rc) {
		mb_stortable_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}

void mb__sttest_print_table(struct ctx *c, const struct mb_stortable *model)
{
	printf("\nstorage test: %s mode, %u KiB pages, %.2f GiB in %u database%s",
	       c->io_mode ? "I/O" : "transactions", c->page_size / 1024,
	       (double)c->db_bytes * c->databases / 1073741824.0, c->databases,
	       c->databases == 1 ? "" : "s");
	if (!c->io_mode)
		printf(", database cache %d MiB", c->cache_mb);
	printf(" (%s)\n", c->reused ? "reused" : "created");
	char rd[48], lg[48];
	mb_threshold_text(&c->lim.db_read, MB_C_STRESS_READ_MS, rd, sizeof(rd));
	mb_threshold_text(&c->lim.log_write, MB_C_STRESS_LOG_MS, lg, sizeof(lg));
	printf("%.0f s warm-up then %.0f s measured per thread count; pass: database read avg %s "
	       "ms, log write avg %s ms\n\n",
	       c->o.warmup, c->o.duration, rd[0] ? rd : "(no threshold)",
	       lg[0] ? lg : "(no threshold)");
	struct mb_table *t;
	if (model && !mb_stortable_by_threads(
			 model, text_cols, (int)(sizeof(text_cols) / sizeof(text_cols[0])), &t)) {
		/* one row per thread count (* auto-tune's best); latencies in ms */
		mb_table_print(t, stdout, 400);
		mb_table_destroy(t);
	}
	for (int i = 0; i < c->nruns; i++) {
		const struct run *r = &c->runs[i];
		if (!r->pass)
			printf("%d threads: FAIL: %s\n", r->f.threads, r->why);
		if (!c->io_mode) {
			printf("%d threads: %.0f transactions/s, database cache %.0f MiB",
			       r->f.threads,
			       r->f.seconds > 0 ? (double)r->f.transactions / r->f.seconds : 0.0,
			       r->cache_mb);
			if (r->hit_pct >= 0)
				printf(" (%.1f%% hits, %llu pages dirty at the end)", r->hit_pct,
				       (unsigned long long)r->dirty);
			char rw[32] = "n/a", dl[32] = "n/a";
			if (r->rw >= 0)
				snprintf(rw, sizeof(rw), "%.2f:1", r->rw);
			if (r->dl >= 0)
				snprintf(dl, sizeof(dl), "%.1f:1", r->dl);
			printf("; db reads:writes %s, db:log transfers %s\n", rw, dl);
			if (!r->in_window)
				printf("%d threads: note: %s\n", r->f.threads, r->note);
		}
	}
	if (c->best >= 0)
		printf("auto-tune: best passing thread count %d at %.0f IOPS (marked *)\n",
		       c->runs[c->best].f.threads, c->runs[c->best].f.iops);
	else if (c->o.autotune)
		printf("auto-tune: no thread count passed\n");
}

static json_t *params_json(const struct ctx *c)
{
	json_t *th;
	if (c->o.autotune) {
		th = json_string("auto");
	} else {
		th = json_array();
		for (int i = 0; i < c->o.nthreads; i++)
			json_array_append_new(th, json_integer(c->o.threads[i]));
	}
	static const char *tn[] = {"performance", "soft-recovery", "checksum"};
	return json_pack(
	    "{s:s,s:s,s:s?,s:s,s:s,s:f,s:i,s:i,s:I,s:i,s:o,s:f,s:f,s:f,s:{s:f,s:f,s:f,s:f,s:f},"
	    "s:f,s:f,s:i}",
	    "scenario", c->cfg.path, "data", c->o.data, "log_dir", c->o.log_dir, "mode",
	    c->io_mode ? "io" : "transactions", "type", tn[c->o.type], "size_gb", c->o.size_gb,
	    "page_kb", (int)(c->page_size / 1024), "databases", (int)c->databases, "db_bytes",
	    (json_int_t)c->db_bytes, "db_cache_mb", c->io_mode ? 0 : c->cache_mb, "threads", th,
	    "duration_s", c->o.duration, "warmup_s", c->o.warmup, "read_pct", c->cfg.read_pct,
	    "mix", "insert_pct", c->cfg.insert_pct, "replace_pct", c->cfg.replace_pct, "delete_pct",
	    c->cfg.delete_pct, "seek_pct", c->cfg.seek_pct, "lazy_commit_pct",
	    c->cfg.lazy_commit_pct, "db_read_avg_ms_max", c->lim.db_read.value,
	    "log_write_avg_ms_max", c->lim.log_write.value, "log_write_bytes",
	    c->io_mode ? MB_IOMODE_LOG_IO : 0);
}

static json_t *run_json(const struct ctx *c, const struct run *r, enum mb_verdict v)
{
	const struct mb_stress_figures *f = &r->f;
	json_t *o =
	    json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:o,s:o,s:o,s:f,s:f,s:f,s:f,s:I,s:b,s:s}",
		      "threads", f->threads, "seconds", f->seconds, "iops", f->iops, "db_read_iops",
		      f->db_read_iops, "db_write_iops", f->db_write_iops, "log_write_iops",
		      f->log_write_iops, "db_read_latency_ms", mb__sttest_lat_json(&f->db_read),
		      "db_write_latency_ms", mb__sttest_lat_json(&f->db_write),
		      "log_write_latency_ms", mb__sttest_lat_json(&f->log_write), "bytes_per_s",
		      f->db_read_bytes_s + f->db_write_bytes_s + f->log_write_bytes_s,
		      "db_read_bytes_per_s", f->db_read_bytes_s, "db_write_bytes_per_s",
		      f->db_write_bytes_s, "log_write_bytes_per_s", f->log_write_bytes_s, "errors",
		      (json_int_t)f->errors, "pass", v == MB_VERDICT_PASS, "fail_reason", r->why);
	json_object_set_new(o, "db_reads_per_write", r->rw >= 0 ? json_real(r->rw) : json_null());
	json_object_set_new(o, "db_per_log_transfers", r->dl >= 0 ? json_real(r->dl) : json_null());
	if (!c->io_mode) {
		/* Jetstress's tuning window applies to the transaction mix */
		json_object_set_new(o, "in_tuning_window", json_boolean(r->in_window));
		json_object_set_new(o, "tuning_note", json_string(r->note));
		json_object_set_new(
		    o, "transactions_per_s",
		    json_real(f->seconds > 0 ? (double)f->transactions / f->seconds : 0.0));
		json_object_set_new(o, "db_cache_in_use_mb", json_real(r->cache_mb));
		json_object_set_new(o, "db_cache_dirty_pages", json_integer((json_int_t)r->dirty));
		json_object_set_new(o, "db_cache_hit_pct",
				    r->hit_pct >= 0 ? json_real(r->hit_pct) : json_null());
	}
	return o;
}

static int write_json(const struct ctx *c, const struct mb_stortable *model, json_t *extra,
		      bool pass)
{
	if (!c->o.json)
		return 0;
	json_t *root = json_object();
	json_object_set_new(root, "tool", json_string("mailbench storage-test"));
	json_object_set_new(root, "version", json_string(PACKAGE_VERSION));
	char plat[256] = "";
	if (!mb_platform_string(plat, sizeof(plat)))
		json_object_set_new(root, "platform", json_string(plat));
	json_object_set_new(root, "parameters", params_json(c));
	json_object_set_new(root, "databases_reused", json_boolean(c->reused));
	json_t *runs = json_array();
	/* the runs follow the published series in the model */
	int first = model ? mb_stortable_count(model) - c->nruns : 0;
	for (int i = 0; i < c->nruns; i++) {
		const struct mb_stor_series *s =
		    model ? mb_stortable_series(model, first + i) : NULL;
		enum mb_verdict v = s		      ? s->verdict
				    : c->runs[i].pass ? MB_VERDICT_PASS
						      : MB_VERDICT_FAIL;
		json_array_append_new(runs, run_json(c, &c->runs[i], v));
	}
	json_object_set_new(root, "runs", runs);
	if (c->o.autotune && c->o.type == T_PERF) {
		json_object_set_new(root, "auto",
				    c->best >= 0
					? json_pack("{s:i,s:f}", "best_threads",
						    c->runs[c->best].f.threads, "best_iops",
						    c->runs[c->best].f.iops)
					: json_pack("{s:n,s:n}", "best_threads", "best_iops"));
	}
	struct mb_stortable *own = NULL;
	if (!model && !mb_stortable_create(&c->cfg, &c->th, &own))
		model = own;
	if (model)
		json_object_set_new(root, "published", mb_stortable_published_json(model));
	mb_stortable_destroy(own);
	if (c->have_err) {
		json_t *e = json_pack("{s:s,s:s}", "file", c->err_file, "message", c->err_msg);
		json_object_set_new(
		    e, "offset",
		    c->err_off == UINT64_MAX ? json_null() : json_integer((json_int_t)c->err_off));
		json_object_set_new(root, "error", e);
	}
	if (extra)
		json_object_update(root, extra);
	json_object_set_new(root, "pass", json_boolean(pass));
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", c->o.json);
	int rc = 0;
	if (json_dump_file(root, tmp, JSON_INDENT(2)) || rename(tmp, c->o.json)) {
		fprintf(stderr, "mailbench " CMD ": cannot write %s: %s\n", c->o.json,
			strerror(errno));
		unlink(tmp);
		rc = MB_ESYS;
	}
	json_decref(root);
	return rc;
}

void mb__sttest_report_error(const struct ctx *c)
{
	if (!c->have_err)
		return;
	if (c->err_off == UINT64_MAX)
		fprintf(stderr, "mailbench " CMD ": %s: %s\n", c->err_file, c->err_msg);
	else
		fprintf(stderr, "mailbench " CMD ": %s at offset %llu: %s\n", c->err_file,
			(unsigned long long)c->err_off, c->err_msg);
}

/* Write the JSON (extra is consumed) and give the exit code. */
int mb__sttest_finish(const struct ctx *c, const struct mb_stortable *model, json_t *extra,
		      bool pass, bool runtime_error)
{
	int jrc = write_json(c, model, extra, pass);
	json_decref(extra);
	if (runtime_error || jrc)
		return MB_EXIT_RUNTIME;
	return pass ? MB_EXIT_OK : MB_EXIT_THRESHOLDS;
}
