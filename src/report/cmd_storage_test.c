/* cmd_storage_test.c: `mailbench storage-test`, a Jetstress-style test of the
 * storage engine: thread sweep or auto-tune, pass/fail on latency, plus the
 * database checksum and soft-recovery test types.
 *
 * Defaults come from scenarios/storage.cfg; the command line overrides
 * them.  Output: a live line on stderr (terminal only), the table on
 * stdout, --json with every figure, --stats-fd one stats line per second.
 * Exit: 0 pass, 1 a threshold failed or an I/O error / checksum mismatch
 * was found (reported with file and offset), 2 bad usage, 3 runtime error.
 * Invariant: every figure printed was measured in this run; what was not
 * measured prints as n/a (null in JSON).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/options.h"
#include "core/counters.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/stats.h"
#include "core/threshold.h"
#include "db/db.h"
#include "report/stortable.h"
#include "report/thresholds.h"
#include "stress/acct.h"
#include "stress/iomode.h"
#include "stress/runner.h"
#include "stress/txnmode.h"
#include "stress/workload.h"
#include "report/sttest_int.h"

_Static_assert(MB_LOG_SEGMENT_SIZE == MB_SC_LOG_SEGMENT_KB * 1024u,
	       "the storage scenario's log.segment_kb is the engine's segment size");

static void on_signal(int sig)
{
	(void)sig;
	mb_stress_interrupt();
}

/* What the option table fills (then copied into struct opts). */
struct st_args {
	char scenario[MB_PATH_MAX], data[MB_PATH_MAX], log_dir[MB_PATH_MAX];
	double size_gb;
	bool size_set;
	int threads[MAX_RUNS];
	int nthreads; /* -1: auto, 0: not given */
	double duration, warmup;
	bool duration_set, warmup_set;
	int mode, type; /* indexes into st_modes / st_types */
	bool mode_set, type_set;
	char read_max[48], log_max[48]; /* a threshold: "< 20", "<= 5", none, or X for "< X" */
	const char *json;
	int stats_fd, segments;
};

static void opts_from_args(const struct st_args *a, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->scenario = a->scenario;
	o->data = a->data;
	o->log_dir = a->log_dir[0] ? a->log_dir : NULL;
	o->size_gb = a->size_gb;
	o->size_set = a->size_set;
	o->autotune = a->nthreads < 0;
	o->nthreads = a->nthreads > 0 ? a->nthreads : 0;
	memcpy(o->threads, a->threads, sizeof(o->threads));
	o->duration = a->duration;
	o->duration_set = a->duration_set;
	o->warmup = a->warmup;
	o->warmup_set = a->warmup_set;
	o->io_mode = a->mode == 1;
	o->mode_set = a->mode_set;
	o->type = a->type; /* T_PERF, T_SOFTREC, T_CHECKSUM: st_types order */
	o->type_set = a->type_set;
	o->read_max = a->read_max;
	o->log_max = a->log_max;
	o->json = a->json;
	o->stats_fd = a->stats_fd;
	o->segments = (unsigned)a->segments;
}

static bool fcntl_check(int fd) { return fcntl(fd, F_GETFD) == -1; }

/* ---- live output and the stats stream ---- */

static const char *na(char *buf, size_t len, const struct mb_lat *l, double v)
{
	if (!l->count)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.2f", v);
	return buf;
}

json_t *mb__sttest_lat_json(const struct mb_lat *l)
{
	if (!l->count)
		return json_pack("{s:n,s:n,s:n,s:n,s:I}", "avg", "p95", "p99", "max", "count",
				 (json_int_t)0);
	return json_pack("{s:f,s:f,s:f,s:f,s:I}", "avg", l->avg, "p95", l->p95, "p99", l->p99,
			 "max", l->max, "count", (json_int_t)l->count);
}

static void tick(void *arg, const struct mb_stress_tick *tk)
{
	struct ctx *c = arg;
	const struct mb_stress_figures *f = tk->sec;
	if (c->tty) {
		char a[16], b[16];
		fprintf(
		    stderr,
		    "\r\033[K%2d threads %-8s %5.0fs  IOPS %7.0f (rd %6.0f wr %6.0f log %6.0f)  "
		    "read %s ms  log %s ms",
		    tk->threads, tk->warm ? "measure" : "warm-up", tk->t, f->iops, f->db_read_iops,
		    f->db_write_iops, f->log_write_iops,
		    na(a, sizeof(a), &f->db_read, f->db_read.avg),
		    na(b, sizeof(b), &f->log_write, f->log_write.avg));
		fflush(stderr);
	}
	if (!c->stats)
		return;
	double value[MB_COUNTER_COUNT] = {0};
	bool has[MB_COUNTER_COUNT] = {0};
	value[MB_C_STRESS_IOPS] = f->iops;
	has[MB_C_STRESS_IOPS] = true;
	if (f->db_read.count) {
		value[MB_C_STRESS_READ_MS] = f->db_read.avg;
		has[MB_C_STRESS_READ_MS] = true;
	}
	if (f->log_write.count) {
		value[MB_C_STRESS_LOG_MS] = f->log_write.avg;
		has[MB_C_STRESS_LOG_MS] = true;
	}
	json_t *h = json_object();
	const enum mb_xfer kinds[2] = {MB_XFER_DB_READ, MB_XFER_LOG_WRITE};
	const char *names[2] = {"db_read", "log_write"};
	for (int i = 0; i < 2; i++) {
		char *enc = NULL;
		if (mb_stress_window_count(tk->secwin, kinds[i]) &&
		    !mb_hist_encode(mb_stress_window_hist(tk->secwin, kinds[i]), &enc)) {
			json_object_set_new(h, names[i], json_string(enc));
			free(enc);
		}
	}
	json_t *x = json_pack(
	    "{s:i,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:o,s:o,s:o,s:I}", "threads", tk->threads, "mode",
	    c->io_mode ? "io" : "transactions", "phase", tk->warm ? "measure" : "warmup", "t",
	    tk->t, "db_read_iops", f->db_read_iops, "db_write_iops", f->db_write_iops,
	    "log_write_iops", f->log_write_iops, "bytes_per_s",
	    f->db_read_bytes_s + f->db_write_bytes_s + f->log_write_bytes_s, "db_read_latency_ms",
	    mb__sttest_lat_json(&f->db_read), "db_write_latency_ms",
	    mb__sttest_lat_json(&f->db_write), "log_write_latency_ms",
	    mb__sttest_lat_json(&f->log_write), "errors", (json_int_t)f->errors);
	if (mb_stats_write(c->stats, f->seconds, value, has, h, x) == MB_ECLOSED) {
		/* the console went away: stop cleanly */
		mb_stress_interrupt();
	}
	json_decref(h);
	json_decref(x);
}

static void live_done(struct ctx *c)
{
	if (c->tty) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
}

/* ---- one measurement ---- */

static int measure(struct ctx *c, const struct mb_stress_worker *w, struct mb_stress_acct *acct,
		   int threads, struct run *r)
{
	struct mb_stress_window *win;
	int rc = mb_stress_window_create(&win);
	if (rc)
		return rc;
	double secs = 0;
	double dur = c->o.duration;
	double cmb;
	uint64_t h0 = 0, m0 = 0, h1 = 0, m1 = 0, dirty = 0;
	if (c->txn)
		mb_txnmode_cache_info(c->txn, &cmb, &h0, &m0, &dirty);
	rc = mb_stress_run_phase(w, acct, threads, c->o.warmup, dur, tick, c, win, &secs);
	live_done(c);
	memset(r, 0, sizeof(*r));
	mb_stress_window_figures(win, secs, threads, &r->f);
	mb_stress_window_destroy(win);
	uint64_t errs = mb_stress_acct_errors(acct);
	if (errs > r->f.errors)
		r->f.errors = errs;
	r->pass = mb_stress_verdict(&r->f, &c->lim, r->why, sizeof(r->why));
	r->in_window = mb_stress_window_check(&r->f, &r->rw, &r->dl, r->note, sizeof(r->note));
	r->hit_pct = -1;
	if (c->txn) {
		/* hit ratio over the phase (warm-up included) */
		mb_txnmode_cache_info(c->txn, &r->cache_mb, &h1, &m1, &r->dirty);
		if (h1 + m1 > h0 + m0)
			r->hit_pct = 100.0 * (double)(h1 - h0) / (double)(h1 + m1 - h0 - m0);
	}
	if (errs && !c->have_err)
		c->have_err =
		    mb_stress_acct_first_error(acct, c->err_msg, sizeof(c->err_msg), c->err_file,
					       sizeof(c->err_file), &c->err_off);
	/* an engine I/O error no transaction saw (e.g. a lazy write-back) */
	int code;
	char what[64];
	if (r->f.errors && !c->have_err && c->txn &&
	    mb_txnmode_io_error(c->txn, c->err_file, sizeof(c->err_file), &c->err_off, &code, what,
				sizeof(what))) {
		snprintf(c->err_msg, sizeof(c->err_msg), "%s (%s)", what, mb_errname(code));
		c->have_err = true;
	}
	return rc;
}

/* ---- the test types ---- */

static void dirs(const struct ctx *c, char *db_dir, size_t dlen, char *log_dir, size_t llen,
		 bool io)
{
	snprintf(db_dir, dlen, "%s/stress%s", c->o.data, io ? "/io" : "");
	if (c->o.log_dir)
		snprintf(log_dir, llen, "%s/stress%s", c->o.log_dir, io ? "/io" : "");
	else
		snprintf(log_dir, llen, "%s%s", io ? db_dir : "", "");
}

/* The transactions-mode settings (directories from dirs()). */
static struct mb_txnmode_cfg txn_cfg(const struct ctx *c, const char *db_dir, const char *log_dir)
{
	return (struct mb_txnmode_cfg){
	    .dir = db_dir,
	    .log_dir = log_dir[0] ? log_dir : NULL,
	    .page_size = c->page_size,
	    .databases = c->databases,
	    .db_bytes = c->db_bytes,
	    .cache_mb = (uint32_t)c->cache_mb,
	    .mix = {c->cfg.insert_pct, c->cfg.replace_pct, c->cfg.delete_pct, c->cfg.seek_pct,
		    c->cfg.lazy_commit_pct, c->cfg.read_pct},
	    .progress = c->tty,
	};
}

/* Open the test files of the current mode; on failure say why on stderr. */
static int open_mode(struct ctx *c, struct mb_iomode **iom)
{
	char db_dir[4096], log_dir[4096], msg[1024];
	dirs(c, db_dir, sizeof(db_dir), log_dir, sizeof(log_dir), c->io_mode);
	int rc;
	if (c->io_mode) {
		struct mb_iomode_cfg ic = {
		    .db_dir = db_dir,
		    .log_dir = log_dir,
		    .page_size = c->page_size,
		    .databases = c->databases,
		    .pages_per_db = c->db_bytes / c->page_size,
		    .read_pct = c->cfg.read_pct,
		    .progress = c->tty,
		};
		if (!(rc = mb_iomode_open(&ic, iom, msg, sizeof(msg))))
			c->reused = mb_iomode_reused(*iom);
	} else {
		struct mb_txnmode_cfg tc = txn_cfg(c, db_dir, log_dir);
		if (!(rc = mb_txnmode_open(&tc, &c->txn, msg, sizeof(msg))))
			c->reused = mb_txnmode_reused(c->txn);
	}
	if (rc)
		fprintf(stderr, "mailbench " CMD ": %s\n", msg[0] ? msg : mb_strerror(rc));
	return rc;
}

static int close_mode(struct ctx *c, struct mb_iomode *iom)
{
	mb_iomode_close(iom);
	int rc = mb_txnmode_close(c->txn);
	c->txn = NULL;
	return rc;
}

static int type_performance(struct ctx *c)
{
	char msg[1024] = "";
	struct mb_iomode *iom = NULL;
	if (open_mode(c, &iom))
		return MB_EXIT_RUNTIME;
	int rc;
	struct mb_stress_acct *acct = NULL;
	struct mb_stress_worker w;
	if ((rc = mb_stress_acct_create(&acct)))
		goto out;
	if (c->io_mode)
		mb_iomode_worker(iom, &w);
	else {
		mb_txnmode_worker(c->txn, &w);
		if ((rc = mb_txnmode_attach(c->txn, acct)))
			goto out;
	}
	c->best = -1;
	if (c->o.autotune) {
		struct mb_tune_step steps[MAX_RUNS];
		int next = 1, best = -1;
		while (c->nruns < MAX_RUNS && !mb_stress_interrupted()) {
			struct run *r = &c->runs[c->nruns];
			rc = measure(c, &w, acct, next, r);
			c->nruns++;
			steps[c->nruns - 1] = (struct mb_tune_step){next, r->f.iops, r->pass};
			if (rc || r->f.errors)
				break;
			if (c->tty)
				fprintf(stderr, "auto-tune: %d threads: %.0f IOPS, %s\n", next,
					r->f.iops, r->pass ? "pass" : "fail");
			if (!mb_stress_tune_next(steps, c->nruns, MB_TUNE_MAX_THREADS,
						 MB_TUNE_MIN_GAIN, &next, &best))
				break;
		}
		mb_stress_tune_next(steps, c->nruns, MB_TUNE_MAX_THREADS, MB_TUNE_MIN_GAIN, &next,
				    &best);
		c->best = best;
	} else {
		for (int i = 0; i < c->o.nthreads && !mb_stress_interrupted(); i++) {
			rc = measure(c, &w, acct, c->o.threads[i], &c->runs[c->nruns]);
			c->nruns++;
			if (rc || c->runs[c->nruns - 1].f.errors)
				break;
		}
	}
out:;
	int crc = close_mode(c, iom);
	if (!rc && crc && !c->have_err) {
		snprintf(msg, sizeof(msg), "closing the test databases: %s", mb_strerror(crc));
		rc = crc;
	}
	mb_stress_acct_destroy(acct);
	if (c->stats)
		mb_stats_write_end(c->stats);
	struct mb_stortable *model = NULL;
	if (mb__sttest_build_model(c, &model))
		model = NULL;
	mb__sttest_print_table(c, model);
	mb__sttest_report_error(c);
	bool pass = c->nruns > 0 && !c->have_err;
	for (int i = 0; i < c->nruns; i++)
		if (!c->o.autotune)
			pass &= c->runs[i].pass;
	if (c->o.autotune)
		pass &= c->best >= 0;
	if (rc && !c->have_err) {
		fprintf(stderr, "mailbench " CMD ": %s\n", msg[0] ? msg : mb_strerror(rc));
		pass = false;
	}
	json_t *extra = json_object();
	if (rc && !c->have_err)
		json_object_set_new(extra, "runtime_error", json_string(mb_strerror(rc)));
	if (mb_stress_interrupted())
		json_object_set_new(extra, "interrupted", json_true());
	int ex = mb__sttest_finish(c, model, extra, pass, rc && !c->have_err);
	mb_stortable_destroy(model);
	return ex;
}

static int type_checksum(struct ctx *c)
{
	struct mb_iomode *iom = NULL;
	if (open_mode(c, &iom))
		return MB_EXIT_RUNTIME;
	int rc;
	struct mb_stress_acct *acct = NULL;
	struct mb_stress_slot *slot = NULL;
	uint64_t pages = 0, bytes = 0;
	double secs = 0;
	if (!(rc = mb_stress_acct_create(&acct)) && !(rc = mb_stress_acct_slot(acct, &slot))) {
		if (c->io_mode) {
			uint64_t t0 = mb_stress_now_ns();
			rc = mb_iomode_verify_all(iom, slot, &bytes);
			secs = (double)(mb_stress_now_ns() - t0) / 1e9;
			pages = bytes / c->page_size;
		} else {
			rc = mb_txnmode_checksum(c->txn, slot, &pages, &bytes, &secs);
		}
	}
	uint64_t errs = acct ? mb_stress_acct_errors(acct) : 0;
	if (errs)
		c->have_err =
		    mb_stress_acct_first_error(acct, c->err_msg, sizeof(c->err_msg), c->err_file,
					       sizeof(c->err_file), &c->err_off);
	mb_stress_acct_destroy(acct);
	close_mode(c, iom);
	double mbs = secs > 0 ? (double)bytes / 1048576.0 / secs : 0.0;
	bool pass = !errs && !rc && pages > 0;
	printf(
	    "\nchecksum: %s mode test databases in %s/stress%s: %llu pages (%.1f MiB) in %.2f s: "
	    "%.1f MB/s, %llu problem%s: %s\n",
	    c->io_mode ? "I/O" : "transactions", c->o.data, c->io_mode ? "/io" : "",
	    (unsigned long long)pages, (double)bytes / 1048576.0, secs, mbs,
	    (unsigned long long)errs, errs == 1 ? "" : "s", pass ? "pass" : "FAIL");
	mb__sttest_report_error(c);
	if (rc && !errs)
		fprintf(stderr, "mailbench " CMD ": checksum pass: %s\n", mb_strerror(rc));
	json_t *extra = json_pack("{s:{s:I,s:I,s:f,s:f,s:I}}", "checksum", "pages",
				  (json_int_t)pages, "bytes", (json_int_t)bytes, "seconds", secs,
				  "mb_per_s", mbs, "problems", (json_int_t)errs);
	return mb__sttest_finish(c, NULL, extra, pass, rc && !errs);
}

static int type_softrec(struct ctx *c)
{
	char msg[1024];
	/* the databases must exist (created and closed in this process before
	 * the fork, so that no engine thread runs when it happens) */
	bool io = c->io_mode;
	c->io_mode = false;
	struct mb_iomode *iom = NULL;
	if (open_mode(c, &iom))
		return MB_EXIT_RUNTIME;
	int rc = close_mode(c, iom);
	if (rc) {
		fprintf(stderr, "mailbench " CMD ": closing the test databases: %s\n",
			mb_strerror(rc));
		return MB_EXIT_RUNTIME;
	}
	if (io)
		fprintf(stderr, "mailbench " CMD ": soft recovery replays the engine's log: "
				"transactions mode used\n");
	char db_dir[4096], log_dir[4096];
	dirs(c, db_dir, sizeof(db_dir), log_dir, sizeof(log_dir), false);
	struct mb_txnmode_cfg tc = txn_cfg(c, db_dir, log_dir);
	tc.progress = false;
	int threads = c->o.autotune || !c->o.nthreads ? 4 : c->o.threads[0];
	struct mb_softrec sr;
	if (c->tty)
		fprintf(stderr, "soft recovery: writing %u log segments with %d threads...\n",
			c->o.segments, threads);
	rc = mb_txnmode_soft_recovery(&tc, threads, c->o.segments, &sr, msg, sizeof(msg));
	if (rc) {
		fprintf(stderr, "mailbench " CMD ": soft recovery: %s\n", msg);
		return mb__sttest_finish(c, NULL, json_pack("{s:s}", "runtime_error", msg), false,
					 true);
	}
	printf("\nsoft recovery: %u log segments (%.1f MiB, %llu records) written in %.2f s with "
	       "%d threads, no checkpoint;\nreplayed in %.3f s: %.1f segments/s, %.1f MB/s\n",
	       sr.segments, (double)sr.log_bytes / 1048576.0, (unsigned long long)sr.records,
	       sr.generate_s, threads, sr.replay_s, sr.segments_per_s, sr.mb_per_s);
	json_t *extra = json_pack(
	    "{s:{s:i,s:I,s:I,s:f,s:f,s:f,s:f,s:i}}", "soft_recovery", "segments", (int)sr.segments,
	    "log_bytes", (json_int_t)sr.log_bytes, "records", (json_int_t)sr.records, "generate_s",
	    sr.generate_s, "replay_s", sr.replay_s, "segments_per_s", sr.segments_per_s, "mb_per_s",
	    sr.mb_per_s, "threads", threads);
	return mb__sttest_finish(c, NULL, extra, true, false);
}

static int st_main(void *args, int argc, char **argv)
{
	static struct ctx c; /* large; one per process */
	int rc;
	(void)argc;
	(void)argv;
	memset(&c, 0, sizeof(c));
	opts_from_args(args, &c.o);
	struct mb_cfg_error cerr;
	memset(&cerr, 0, sizeof(cerr));
	if ((rc = mb_storage_cfg_load(c.o.scenario, &c.cfg, &cerr))) {
		char buf[1024];
		mb_cfg_error_format(&cerr, buf, sizeof(buf));
		fprintf(stderr, "mailbench " CMD ": %s\n", buf);
		return MB_EXIT_USAGE;
	}
	/* the scenario's defaults, then the command line */
	if (!c.o.size_set)
		c.o.size_gb = c.cfg.db_size_gb;
	if (!c.o.autotune && !c.o.nthreads) {
		for (int i = 0; i < c.cfg.thread_count && i < MAX_RUNS; i++)
			c.o.threads[c.o.nthreads++] = c.cfg.threads[i];
		if (!c.o.nthreads)
			c.o.threads[c.o.nthreads++] = 4;
	}
	if (!c.o.duration_set)
		c.o.duration = c.cfg.duration_s;
	if (!c.o.warmup_set)
		c.o.warmup = c.cfg.warmup_s;
	if (!c.o.mode_set)
		c.o.io_mode = !strcmp(c.cfg.mode, "io");
	if (!c.o.type_set)
		c.o.type = !strcmp(c.cfg.type, "checksum")	  ? T_CHECKSUM
			   : !strcmp(c.cfg.type, "soft-recovery") ? T_SOFTREC
								  : T_PERF;
	/* the thresholds: the storage file's, then the command line */
	mb_thresholds_init(&c.th, NULL, &c.cfg);
	const char *flags[2] = {"read-ms-max", "log-ms-max"};
	const char *given[2] = {c.o.read_max, c.o.log_max};
	enum mb_counter_id ids[2] = {MB_C_STRESS_READ_MS, MB_C_STRESS_LOG_MS};
	for (int k = 0; k < 2; k++) {
		if (given[k][0] &&
		    mb_threshold_parse_limit(given[k], MB_LATENCY_LIMIT_MIN, MB_LATENCY_LIMIT_MAX,
					     &c.th.counter[ids[k]])) {
			fprintf(stderr,
				"mailbench " CMD ": --%s %s: must be a limit in ms (0 < X <= "
				"1e12, meaning \"< X\"), a comparison such as \"<= 5\", or none\n",
				flags[k], given[k]);
			return MB_EXIT_USAGE;
		}
	}
	c.lim.db_read = c.th.counter[MB_C_STRESS_READ_MS];
	c.lim.log_write = c.th.counter[MB_C_STRESS_LOG_MS];
	if (c.o.duration <= 0 && (c.o.autotune || c.o.nthreads > 1)) {
		fprintf(stderr, "mailbench " CMD ": --duration 0 (until stopped) needs a "
				"single thread count\n");
		return MB_EXIT_USAGE;
	}
	c.io_mode = c.o.io_mode;
	c.page_size = (unsigned)c.cfg.page_kb * 1024;
	c.databases = (unsigned)(c.cfg.databases > 0 ? c.cfg.databases : 1);
	if (!c.io_mode || c.o.type == T_SOFTREC) {
		/* the engine allows one thread per database handle: enough
		 * databases for one per thread */
		if (c.databases < TXN_MIN_DBS)
			c.databases = TXN_MIN_DBS;
	}
	uint64_t total = (uint64_t)(c.o.size_gb * 1073741824.0);
	/* the cache stays deliberately small: the scenario's size, but never
	 * more than 1/32 of the databases, so the work reaches the disk */
	c.cache_mb = c.cfg.db_cache_mb;
	if ((uint64_t)c.cache_mb > (total >> 20) / 32)
		c.cache_mb = (int)((total >> 20) / 32);
	if (c.cache_mb < MIN_CACHE_MB)
		c.cache_mb = MIN_CACHE_MB;
	c.db_bytes = total / c.databases / c.page_size * c.page_size;
	if (c.db_bytes < 4ull * c.page_size) {
		fprintf(stderr,
			"mailbench " CMD ": --size %g: too small for %u databases of "
			"%u KiB pages\n",
			c.o.size_gb, c.databases, c.page_size / 1024);
		return MB_EXIT_USAGE;
	}
	if (c.o.stats_fd >= 0) {
		if (fcntl_check(c.o.stats_fd)) {
			fprintf(stderr,
				"mailbench " CMD ": --stats-fd %d: not an open file "
				"descriptor\n",
				c.o.stats_fd);
			return MB_EXIT_USAGE;
		}
		if (mb_stats_writer_create(c.o.stats_fd, "stress", &c.stats)) {
			fprintf(stderr, "mailbench " CMD ": --stats-fd %d: cannot use it\n",
				c.o.stats_fd);
			return MB_EXIT_USAGE;
		}
	}
	c.tty = isatty(STDERR_FILENO);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (c.o.type == T_CHECKSUM)
		rc = type_checksum(&c);
	else if (c.o.type == T_SOFTREC)
		rc = type_softrec(&c);
	else
		rc = type_performance(&c);
	mb_stats_writer_destroy(c.stats);
	return rc;
}

static const char *const st_modes[] = {"transactions", "io", NULL};
static const char *const st_types[] = {"performance", "soft-recovery", "checksum", NULL};

#define TA struct st_args
static const struct mb_opt st_opts[] = {
    MB_OPTION_DATA(TA, data, 0, 0, MB_DEFAULT_DATA_DIR "; test files live in DIR/stress/"),
    MB_OPTION_LOG_DIR(TA, log_dir, 0, "DATA/stress/"),
    {.path = "size",
     .flag = "size",
     .metavar = "GB",
     .type = MB_OT_DOUBLE,
     .off = offsetof(TA, size_gb),
     .aux = offsetof(TA, size_set),
     .flags = MB_OPT_HAS,
     .min = MB_STRESS_SIZE_MIN,
     .max = MB_STRESS_SIZE_MAX,
     .dtext = "the storage file's database.size_gb",
     .help = "total size of the test databases"},
    {.path = "threads",
     .flag = "threads",
     .metavar = "LIST|auto",
     .type = MB_OT_INT_LIST,
     .off = offsetof(TA, threads),
     .size = MAX_RUNS,
     .aux = offsetof(TA, nthreads),
     .min = 1,
     .max = MB_STRESS_THREADS_MAX,
     .flags = MB_OPT_AUTO,
     .dtext = "the storage file's run.threads",
     .help = "thread counts to sweep, e.g. 4,8,12; auto raises the count until a threshold "
	     "fails or IOPS stop growing"},
    {.path = "duration",
     .flag = "duration",
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(TA, duration),
     .aux = offsetof(TA, duration_set),
     .flags = MB_OPT_HAS,
     .min = 0,
     .max = MB_DURATION_MAX,
     .dtext = "the storage file's run.duration_s",
     .help = "measured seconds per thread count (0: until stopped)"},
    {.path = "warmup",
     .flag = "warmup",
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(TA, warmup),
     .aux = offsetof(TA, warmup_set),
     .flags = MB_OPT_HAS,
     .min = 0,
     .max = MB_WARMUP_MAX,
     .dtext = "the storage file's run.warmup_s",
     .help = "transient seconds before each measurement"},
    {.path = "mode",
     .flag = "mode",
     .type = MB_OT_ENUM,
     .off = offsetof(TA, mode),
     .aux = offsetof(TA, mode_set),
     .flags = MB_OPT_HAS,
     .choices = st_modes,
     .dtext = "the storage file's run.mode",
     .help = "engine transactions or raw page I/O through the engine's I/O layer"},
    {.path = "type",
     .flag = "type",
     .type = MB_OT_ENUM,
     .off = offsetof(TA, type),
     .aux = offsetof(TA, type_set),
     .flags = MB_OPT_HAS,
     .choices = st_types,
     .dtext = "the storage file's run.type",
     .help = "what the test does"},
    {.path = "read-ms-max",
     .flag = "read-ms-max",
     .metavar = "X|EXPR",
     .type = MB_OT_STRING,
     .off = offsetof(TA, read_max),
     .size = MB_FIELD_SIZE(TA, read_max),
     .sdef = "",
     .dtext = "the storage file's thresholds.db_read_avg_ms_max",
     .help = "pass threshold of the database read average, ms: X means \"< X\"; or a comparison "
	     "such as \"<= 5\", or none"},
    {.path = "log-ms-max",
     .flag = "log-ms-max",
     .metavar = "X|EXPR",
     .type = MB_OT_STRING,
     .off = offsetof(TA, log_max),
     .size = MB_FIELD_SIZE(TA, log_max),
     .sdef = "",
     .dtext = "the storage file's thresholds.log_write_avg_ms_max",
     .help = "pass threshold of the log write average, ms: X means \"< X\"; or a comparison "
	     "such as \"<= 5\", or none"},
    {.path = "segments",
     .flag = "segments",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(TA, segments),
     .def = 32,
     .min = 1,
     .max = 100000,
     .dtext = "32",
     .help = "soft-recovery: log segments to replay"},
    MB_OPTION_JSON(TA, json, "write every figure and the parameters as JSON"),
    MB_OPTION_STATS_FD(TA, stats_fd, 0),
    MB_OPTION_SCENARIO_H(TA, scenario, "storage", 0, "storage",
			 "storage-test file: storage, or a .cfg path of kind \"storage\""),
};

const struct mb_cmd_entry mb_cmd_storage_test_entry = {
    .name = "storage-test",
    .usage = "[--threads LIST|auto] [--mode transactions|io] [OPTIONS]",
    .summary = "Jetstress-style storage test of the engine",
    .about = "A Jetstress-style stress of the storage engine: database reads and writes and\n"
	     "log writes at a chosen or auto-tuned thread count, with pass/fail on the database\n"
	     "read and log write average latencies.",
    .epilog = "exit codes: 0 pass, 1 thresholds failed or I/O error/checksum mismatch,\n"
	      "2 usage or input error, 3 runtime failure",
    .opts = st_opts,
    .nopts = (int)(sizeof(st_opts) / sizeof(st_opts[0])),
    .args_size = sizeof(struct st_args),
    .run = st_main,
};
