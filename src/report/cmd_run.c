/* cmd_run.c: `mailbench run`, the headless run: initialise if needed,
 * start the store and the load engine (and the storage test if asked),
 * print a progress line to stderr every few seconds, then the comparison
 * table on stdout (the console's table code), JSON and CSV.
 * Exit codes: 0 thresholds passed, 1 failed, 2 usage, 3 runtime failure.
 * Invariant: no child survives the command, whatever the exit path. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "core/sig.h"
#include "core/error.h"
#include "report/acttable.h"
#include "report/compare.h"
#include "report/faults.h"
#include "report/html.h"
#include "report/runopts.h"
#include "report/session.h"
#include "report/supervisor.h"
#include "report/timeline.h"

#define PROGRESS_S 5

struct run_ctx {
	uv_loop_t loop;
	struct mb_session *s;
	uv_timer_t progress, poll;
	uv_signal_t sigint, sigterm;
	int signals;
	bool quiet;
};

static void on_message(void *arg, struct mb_session *s, const char *msg)
{
	struct run_ctx *r = arg;
	(void)s;
	if (!r->quiet)
		fprintf(stderr, "mailbench run: %s\n", msg);
}

static void on_progress(uv_timer_t *t)
{
	struct run_ctx *r = t->data;
	if (r->quiet)
		return;
	double pct, eta;
	if (mb_session_init_progress(r->s, &pct, &eta)) {
		if (eta >= 0)
			fprintf(stderr, "mailbench run: initialising %.0f%%, eta %.0f s\n", pct,
				eta);
		else
			fprintf(stderr, "mailbench run: initialising %.0f%%\n", pct);
		return;
	}
	if (mb_session_state(r->s) != MB_SS_RUNNING && !mb_session_stress_active(r->s))
		return;
	double v[MB_COUNTER_COUNT];
	bool h[MB_COUNTER_COUNT];
	mb_session_live(r->s, v, h);
	static const enum mb_counter_id show[] = {
	    MB_C_USERS,	       MB_C_PROCESSOR_PCT,    MB_C_RPC_OPS,    MB_C_CLIENT_LATENCY,
	    MB_C_DB_TRANSFERS, MB_C_LOADSIM_SCORE_MS, MB_C_STRESS_IOPS};
	char line[512];
	int o = snprintf(line, sizeof(line), "t=%.0fs", mb_session_elapsed(r->s));
	for (size_t i = 0; i < sizeof(show) / sizeof(show[0]); i++) {
		char val[32];
		if (mb_counters[show[i]].source == MB_SRC_STRESS && !mb_session_stress_active(r->s))
			continue;
		mb_format_value(show[i], h[show[i]], v[show[i]], val, sizeof(val));
		if (o < (int)sizeof(line))
			o += snprintf(line + o, sizeof(line) - (size_t)o, " %s=%s",
				      mb_counters[show[i]].key, val);
	}
	if (h[MB_C_LOAD_SATURATED] && v[MB_C_LOAD_SATURATED] > 0 && o < (int)sizeof(line))
		snprintf(line + o, sizeof(line) - (size_t)o, " LOAD ENGINE SATURATED");
	fprintf(stderr, "mailbench run: %s\n", line);
}

static void on_poll(uv_timer_t *t)
{
	struct run_ctx *r = t->data;
	if (!mb_session_load_active(r->s) && !mb_session_stress_active(r->s) &&
	    mb_session_children(r->s) == 0)
		uv_stop(&r->loop);
	/* a failed storage test or load ends the whole run */
	if (mb_session_failed(r->s)) {
		if (mb_session_load_active(r->s))
			mb_session_stop_load(r->s);
		if (mb_session_stress_active(r->s))
			mb_session_stop_stress(r->s);
	}
}

static void on_signal(uv_signal_t *h, int sig)
{
	struct run_ctx *r = h->data;
	if (++r->signals == 1) {
		fprintf(stderr, "mailbench run: %s: stopping (again to kill)\n", strsignal(sig));
		mb_session_stop_all(r->s);
	} else {
		mb_sup_emergency_kill();
		uv_stop(&r->loop);
	}
}

static void crash_handler(int sig)
{
	mb_sup_emergency_kill();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int table_width(void)
{
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	const char *c = getenv("COLUMNS");
	if (c && atoi(c) >= 40)
		return atoi(c);
	return 132;
}

static void print_latency(FILE *f, const char *what, const struct mb_latency *l)
{
	if (!l->has) {
		fprintf(f, "%-30s n/a\n", what);
		return;
	}
	fprintf(f, "%-30s mean %.2f  p50 %.2f  p95 %.2f  p99 %.2f  max %.2f ms  (%llu)\n", what,
		l->mean_ms, l->p50_ms, l->p95_ms, l->p99_ms, l->max_ms,
		(unsigned long long)l->count);
}

/* The final report on stdout: the shared comparison table, then the
 * figures beside it. */
static void print_health(FILE *f, const struct mb_run_summary *sum)
{
	const struct mb_run_health *h = &sum->health;
	if (h->sg_error_groups)
		fprintf(f, "storage groups in the ERROR state: %s\n", h->sg_errors);
	for (int i = 0; i < h->nfaults; i++) {
		const struct mb_fault_figures *x = &h->faults[i];
		char rec[48] = "n/a (no successful action after it)";
		if (x->has_recovery)
			snprintf(rec, sizeof(rec), "%.2f s", x->recovery_s);
		fprintf(f,
			"fault %-24s at %.1f s, cause removed at %.1f s, recovery %s, %.0f actions "
			"failed\n  %s\n",
			x->spec, x->at_s, x->end_s, rec, x->failed_during, x->note);
	}
	if (h->ack_checked)
		fprintf(f, "acknowledged writes: %.0f checked, %.0f lost%s%s\n", h->acks_checked,
			h->acks_lost, h->ack_note[0] ? ": " : "", h->ack_note);
	else if (h->ack_note[0])
		fprintf(f, "acknowledged writes: not checked: %s\n", h->ack_note);
	if (h->has_conn && (h->conn_lost > 0 || h->connect_failures > 0 || h->server_restarts > 0))
		fprintf(
		    f,
		    "connections: %.0f lost, %.0f reconnects, %.0f connect failures, %.0f logon "
		    "failures; servers restarted by the lab: %d\n",
		    h->conn_lost, h->reconnects, h->connect_failures, h->logon_failures,
		    h->server_restarts);
	for (int i = 0; i < h->nfail_causes; i++)
		fprintf(f, "%s%s %.0f (%s)%s",
			i ? "; " : "failed actions by cause: ", h->fail_causes[i].cause,
			h->fail_causes[i].n, h->fail_causes[i].what,
			i + 1 == h->nfail_causes ? "\n" : "");
	if (h->sg_error_groups || h->nfaults || h->ack_checked || h->has_conn || h->nfail_causes)
		fprintf(f, "\n");
}

static void print_report(struct mb_session *s, const struct mb_run_summary *sum, FILE *f)
{
	const struct mb_scenario *sc = mb_session_scenario(s);
	/* the verdict and why, first */
	if (sum->overall == MB_VERDICT_FAIL)
		fprintf(f, "verdict: FAIL: %s\n\n", sum->reason[0] ? sum->reason : "see below");
	else
		fprintf(f, "verdict: %s\n\n", mb_verdict_str(sum->overall));
	print_health(f, sum);
	struct mb_compare_input in;
	memset(&in, 0, sizeof(in));
	in.sc = sc;
	in.th = &sum->thresholds;
	in.diff_col = sc->column_count > 0 ? sc->column_count - 1 : -1;
	in.avg = sum->avg;
	in.avg_has = sum->has;
	in.platform = sum->platform;
	in.engine = sum->engine;
	in.client_mode = sum->client_mode;
	in.smt = sum->smt;
	in.users = sum->users;
	in.scale = sum->scale;
	in.accel = sum->accel;
	char load[400] = "";
	if (sum->load.ranks > 0) {
		char d[320];
		mb_load_ranks_desc(&sum->load, d, sizeof(d));
		snprintf(load, sizeof(load), "load: %s (Open MPI)", d);
	}
	in.load = load;
	in.protocol = mb_compare_protocol_target(sum->target);
	struct mb_table *t;
	fprintf(f,
		"%s: %d users, scale %g, accel %g, compression %s, %.0f s measured after %.0f s "
		"warm-up, target %s\n",
		sc->title, sum->users, sum->scale, sum->accel, mb_summary_compression(sum),
		sum->measured_s, sum->warmup_s, sum->target[0] ? sum->target : "mbstore");
	if (sum->has_first_downloads) {
		if (sum->first_downloads_s >= 0)
			fprintf(f,
				"cached mode: every user's first download done %.0f s after the "
				"load started; measured from %.0f s\n",
				sum->first_downloads_s, sum->warmup_s);
		else
			fprintf(f,
				"cached mode: first downloads done for %llu of %d users; measured "
				"from %.0f s, with some still downloading\n",
				(unsigned long long)sum->first_downloads, sum->users,
				sum->warmup_s);
	}
	if (sum->data.has)
		fprintf(f, "seed %ld, database cache %.4g MiB, data %s (%.1f MB, state %s)\n",
			sum->seed, sum->cache_mb,
			sum->data.reused     ? "reused as the last run left it"
			: sum->data.restored ? "restored from the pristine copy"
					     : "saved as the pristine copy",
			sum->data.bytes / 1048576.0, sum->data.fingerprint);
	if (load[0]) {
		fprintf(f, "%s:", load);
		for (int i = 0; i < sum->load.listed; i++)
			fprintf(f, "%s rank %d %s users %d-%d", i ? ";" : "", i,
				sum->load.rank[i].host, sum->load.rank[i].first,
				sum->load.rank[i].last);
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
	if (mb_compare_build(&in, &t) == 0) {
		mb_table_print(t, f, table_width());
		mb_table_destroy(t);
	}
	fprintf(f, "\n");
	if (sum->unmeasured[0])
		fprintf(f, "n/a: %s\n\n", sum->unmeasured);
	char val[32];
	static const enum mb_counter_id beside[] = {
	    MB_C_MACHINE_CPU_PCT,     MB_C_MACHINE_STEAL_PCT, MB_C_MACHINE_IOWAIT_PCT,
	    MB_C_STORE_LOOP_CPU_PCT,  MB_C_LOAD_CPU_PCT,      MB_C_SYSTEM_CONTEXT_SWITCHES,
	    MB_C_DELIVERY_RECIPIENTS, MB_C_RPC_PER_S,	      MB_C_DB_CACHE_HIT_PCT,
	    MB_C_CACHE_DATA_PCT,      MB_C_STORE_RSS_MB,      MB_C_ACTIONS,
	    MB_C_ACTIONS_FAILED,      MB_C_LOOP_LAG_MS,	      MB_C_STRESS_IOPS,
	    MB_C_STRESS_READ_MS,      MB_C_STRESS_LOG_MS};
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		enum mb_counter_id id = beside[i];
		if (mb_counters[id].source == MB_SRC_STRESS && !sum->storage_test)
			continue;
		mb_format_value(id, sum->has[id], sum->avg[id], val, sizeof(val));
		if (id == MB_C_CACHE_DATA_PCT && sum->comparison.has) {
			const struct mb_norm_cmp *cc = &sum->comparison.row[MB_C_DB_CACHE_MB];
			fprintf(f, "%-30s %s (published (%s): %.3f)\n", mb_counters[id].label, val,
				sum->comparison.column, cc->published);
			continue;
		}
		fprintf(f, "%-30s %s\n", mb_counters[id].label, val);
	}
	print_latency(f, "RPC round trip", &sum->rpc_latency);
	print_latency(f, "action response", &sum->action_latency);
	if (sum->has_score)
		fprintf(f, "%-30s %.0f ms\n", "LoadSim score (p95)", sum->score_ms);
	else
		fprintf(f, "%-30s n/a\n", "LoadSim score (p95)");
	if (sum->has[MB_C_LOAD_SATURATED] && sum->avg[MB_C_LOAD_SATURATED] > 0)
		fprintf(
		    f,
		    "WARNING: the load engine reported itself saturated: results are misleading\n");
	fprintf(f, "\n");
	if (mb_acttable_build(sum, sc, NULL, &t) == 0) {
		mb_table_print(t, f, table_width());
		mb_table_destroy(t);
	}
	if (sum->has_messages_sent)
		fprintf(f, "%-22s %.2f per user-day (published profile: %.2f)\n", "messages sent",
			sum->messages_sent_per_user_day, sc->messages_sent_per_day);
	if (sum->has_messages_received)
		fprintf(f, "%-22s %.2f per user-day (published profile: %.2f)\n",
			"messages received", sum->messages_received_per_user_day,
			sc->messages_received_per_day);
	fprintf(f, "\nthresholds (run average after warm-up):\n");
	int nth = 0;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		const struct mb_threshold *thr = &sum->thresholds.counter[i];
		/* the storage test's counters when one ran */
		if (thr->cmp == MB_CMP_NONE ||
		    (mb_counters[i].source == MB_SRC_STRESS && !sum->storage_test))
			continue;
		char th[48];
		mb_threshold_text(thr, (enum mb_counter_id)i, th, sizeof(th));
		mb_format_value((enum mb_counter_id)i, sum->has[i], sum->avg[i], val, sizeof(val));
		fprintf(f, "  %-30s %-12s %12s  %s\n", mb_counters[i].label, th, val,
			mb_verdict_str(sum->verdict[i]));
		nth++;
	}
	if (sum->storage_test)
		fprintf(f, "  %-30s (its two latency counters above): %s\n", "storage test",
			mb_verdict_str(sum->storage_verdict));
	else if (nth == 0)
		fprintf(f, "  none set\n");
	if (sum->failed)
		fprintf(f, "\nRUN FAILED: %s\n", sum->failure);
	if (sum->invalid)
		fprintf(f, "\nRUN INVALID (a load rank was saturated): %s\n", sum->invalid_why);
	fprintf(f, "\nverdict: %s\n", mb_verdict_str(sum->overall));
}

struct run_args {
	struct mb_session_params p; /* first: MB_RUNOPTS */
	const char *json, *csv, *html;
	const char *fault; /* --fault SPEC[,SPEC...] */
	bool storage, no_save, quiet;
};

/* Can path be written (its directory exists and is writable, and it is
 * not a directory)?  Says why on stderr when not. */
static bool output_unwritable(const char *flag, const char *path)
{
	char dir[MB_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	struct stat st;
	const char *why = NULL;
	if (!path[0] || path[strlen(path) - 1] == '/')
		why = "not a file name";
	else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		why = "is a directory";
	else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		why = "its directory does not exist";
	else if (access(dir, W_OK | X_OK) != 0)
		why = strerror(errno);
	else if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
		why = strerror(errno);
	if (!why)
		return false;
	fprintf(stderr, "mailbench run: %s %s: cannot be written (%s)\n", flag, path, why);
	return true;
}

/* Each spec of a comma-separated --fault list through fn; 0 or the first error. */
static int each_fault(const char *list, int (*fn)(void *arg, const char *spec), void *arg)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int rc = fn(arg, t);
		if (rc)
			return rc;
	}
	return 0;
}

static int fault_parse_one(void *arg, const char *spec)
{
	int *n = arg;
	struct mb_fault_spec sp;
	char err[256];
	if (mb_fault_parse(spec, &sp, err, sizeof(err))) {
		fprintf(stderr, "mailbench run: --fault %s\n", err);
		return MB_EXIT_USAGE;
	}
	if (++*n > MB_RUN_MAX_FAULTS) {
		fprintf(stderr, "mailbench run: --fault: at most %d faults\n", MB_RUN_MAX_FAULTS);
		return MB_EXIT_USAGE;
	}
	return 0;
}

static int fault_add_one(void *arg, const char *spec)
{
	char err[256];
	if (mb_session_add_fault(arg, spec, err, sizeof(err))) {
		fprintf(stderr, "mailbench run: --fault %s\n", err);
		return MB_EXIT_USAGE;
	}
	return 0;
}

/* The checks that start nothing (--check-args runs them too): outputs that
 * cannot be written and bad fault specs are found now, not after the run. */
static int run_check(void *args)
{
	const struct run_args *a = args;
	int n = 0;
	if ((a->json && output_unwritable("--json", a->json)) ||
	    (a->csv && output_unwritable("--csv", a->csv)) ||
	    (a->html && output_unwritable("--html", a->html)))
		return MB_EXIT_USAGE;
	if (a->fault && each_fault(a->fault, fault_parse_one, &n))
		return MB_EXIT_USAGE;
	return 0;
}

/* The report of this one run (`mailbench report` of its JSON). */
static void write_html(struct run_ctx *r, const struct mb_run_summary *sum, const char *path)
{
	json_t *j = mb_summary_to_json(sum);
	json_t *ser = mb_runseries_json(mb_session_series(r->s), mb_session_timeline(r->s),
					mb_session_load_offset(r->s));
	char why[1024] = "";
	int rc = MB_ENOMEM;
	if (j && ser) {
		json_object_set(j, "series", ser);
		const char *name = path;
		rc = mb_html_report_file(&j, &name, 1, path, why, sizeof(why));
	}
	if (rc)
		fprintf(stderr, "mailbench run: cannot write %s: %s\n", path,
			why[0] ? why : mb_strerror(rc));
	json_decref(ser);
	json_decref(j);
}

static int run_main(void *args, int argc, char **argv)
{
	struct run_args *a = args;
	struct mb_session_params p = a->p;
	const char *json_path = a->json, *csv_path = a->csv;
	bool storage = a->storage, quiet = a->quiet;
	(void)argc;
	(void)argv;
	p.save_runs = !a->no_save;

	struct run_ctx r;
	memset(&r, 0, sizeof(r));
	r.quiet = quiet;
	if (uv_loop_init(&r.loop)) {
		fprintf(stderr, "mailbench run: cannot create the event loop\n");
		return MB_EXIT_RUNTIME;
	}
	static const struct mb_session_events ev = {NULL, on_message};
	if (mb_session_create(&r.loop, &ev, &r, &r.s)) {
		fprintf(stderr, "mailbench run: cannot create the session\n");
		uv_loop_close(&r.loop);
		return MB_EXIT_RUNTIME;
	}
	struct mb_cfg_error err;
	memset(&err, 0, sizeof(err));
	int rc = mb_session_configure(r.s, &p, &err);
	if (rc) {
		char msg[8192];
		mb_cfg_error_format(&err, msg, sizeof(msg));
		fprintf(stderr, "mailbench run: %s\n", msg);
		mb_session_destroy(r.s);
		uv_run(&r.loop, UV_RUN_DEFAULT);
		uv_loop_close(&r.loop);
		return MB_EXIT_USAGE;
	}
	/* duration: the option, else the scenario's */
	if (p.duration_s <= 0) {
		p.duration_s = mb_session_scenario(r.s)->duration_s;
		if (p.duration_s <= 0)
			p.duration_s = 60;
	}
	/* the averages need measured time after the warm-up */
	if (p.warmup_s >= p.duration_s) {
		fprintf(stderr, "mailbench run: --warmup %g must be shorter than the run (%g s)\n",
			p.warmup_s, p.duration_s);
		mb_session_destroy(r.s);
		uv_run(&r.loop, UV_RUN_DEFAULT);
		uv_loop_close(&r.loop);
		return MB_EXIT_USAGE;
	}
	if (p.warmup_s < 0 && mb_session_warmup(r.s) * 2 > p.duration_s) {
		/* a short run: the scenario's warm-up would leave too little */
		p.warmup_s = floor(p.duration_s / 3);
		fprintf(stderr,
			"mailbench run: warm-up %g s (a third of the run; the scenario's %g s "
			"would leave too little to average; --warmup sets it)\n",
			p.warmup_s, mb_session_warmup(r.s));
	}
	if (storage)
		p.stress_duration_s = p.duration_s;
	mb_session_configure(r.s, &p, &err);
	if (a->fault && each_fault(a->fault, fault_add_one, r.s)) {
		mb_session_destroy(r.s);
		uv_run(&r.loop, UV_RUN_DEFAULT);
		uv_loop_close(&r.loop);
		return MB_EXIT_USAGE;
	}

	signal(SIGSEGV, crash_handler);
	signal(SIGABRT, crash_handler);
	signal(SIGBUS, crash_handler);
	uv_signal_init(&r.loop, &r.sigint);
	uv_signal_init(&r.loop, &r.sigterm);
	r.sigint.data = r.sigterm.data = &r;
	uv_signal_start(&r.sigint, on_signal, SIGINT);
	uv_signal_start(&r.sigterm, on_signal, SIGTERM);
	uv_timer_init(&r.loop, &r.progress);
	uv_timer_init(&r.loop, &r.poll);
	r.progress.data = r.poll.data = &r;
	uv_timer_start(&r.progress, on_progress, PROGRESS_S * 1000, PROGRESS_S * 1000);
	uv_timer_start(&r.poll, on_poll, 200, 200);

	rc = mb_session_start_load(r.s);
	if (rc == 0 && storage)
		rc = mb_session_start_stress(r.s, p.stress_threads);
	if (rc)
		mb_session_stop_all(r.s);
	uv_run(&r.loop, UV_RUN_DEFAULT);

	struct mb_run_summary *sum = calloc(1, sizeof(*sum));
	int exit_code = MB_EXIT_RUNTIME;
	if (sum && mb_session_summary(r.s, sum) == 0) {
		if (r.signals && !sum->failed) {
			sum->failed = true;
			snprintf(sum->failure, sizeof(sum->failure), "interrupted by a signal");
			mb_summary_evaluate(sum);
		}
		print_report(r.s, sum, stdout);
		fflush(stdout);
		if (json_path &&
		    (mb_summary_write(sum, json_path) ||
		     mb_runseries_attach(json_path, mb_session_series(r.s),
					 mb_session_timeline(r.s), mb_session_load_offset(r.s))))
			fprintf(stderr, "mailbench run: cannot write %s\n", json_path);
		if (a->html)
			write_html(&r, sum, a->html);
		if (csv_path && mb_csv_write_file(mb_session_series(r.s),
						  mb_session_load_offset(r.s), csv_path))
			fprintf(stderr, "mailbench run: cannot write %s\n", csv_path);
		if (mb_session_saved_path(r.s)[0] && !quiet)
			fprintf(stderr, "mailbench run: summary saved in %s\n",
				mb_session_saved_path(r.s));
		exit_code = sum->failed					      ? MB_EXIT_RUNTIME
			    : sum->overall == MB_VERDICT_FAIL || sum->invalid ? MB_EXIT_THRESHOLDS
									      : MB_EXIT_OK;
	}
	free(sum);
	uv_close((uv_handle_t *)&r.sigint, NULL);
	uv_close((uv_handle_t *)&r.sigterm, NULL);
	mb_signals_absorb(); /* a late second SIGTERM must not cut the clean-up */
	uv_close((uv_handle_t *)&r.progress, NULL);
	uv_close((uv_handle_t *)&r.poll, NULL);
	mb_session_destroy(r.s);
	uv_run(&r.loop, UV_RUN_DEFAULT);
	uv_loop_close(&r.loop);
	return exit_code;
}

#define RA struct run_args
static const struct mb_opt run_opts[] = {
    MB_RUNOPTS(RA),
    {.path = "duration",
     .flag = "duration",
     .sflag = 'd',
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(RA, p.duration_s),
     .min = 0,
     .max = MB_DURATION_MAX,
     .flags = MB_OPT_LO_OPEN,
     .dtext = "the scenario's run.duration_s",
     .help = "seconds of load"},
    MB_OPTION_WARMUP(RA, p.warmup_s, 0, -1,
		     "the scenario's run.warmup_s, or a third of a run shorter than twice that; "
		     "shorter than the run"),
    {.path = "storage-test",
     .flag = "storage-test",
     .type = MB_OT_FLAG,
     .off = offsetof(RA, storage),
     .help = "run the storage test during the load"},
    {.path = "threads",
     .flag = "threads",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(RA, p.stress_threads),
     .min = 1,
     .max = MB_STRESS_THREADS_MAX,
     .dtext = "storage.cfg's first",
     .help = "storage test threads"},
    MB_OPTION_JSON(RA, json, "write the run summary as JSON (docs/run-json.md)"),
    {.path = "csv",
     .flag = "csv",
     .metavar = "FILE",
     .type = MB_OT_ARG,
     .off = offsetof(RA, csv),
     .flags = MB_OPT_NONEMPTY,
     .help = "write one row per second per counter"},
    {.path = "html",
     .flag = "html",
     .metavar = "FILE",
     .type = MB_OT_ARG,
     .off = offsetof(RA, html),
     .flags = MB_OPT_NONEMPTY,
     .help = "write the stakeholder report of this run (as mailbench report)"},
    {.path = "no-save",
     .flag = "no-save",
     .type = MB_OT_FLAG,
     .off = offsetof(RA, no_save),
     .help = "do not save the summary in DATA/runs/"},
    {.path = "fault",
     .flag = "fault",
     .metavar = "SPEC[,SPEC]",
     .type = MB_OT_ARG,
     .off = offsetof(RA, fault),
     .flags = MB_OPT_NONEMPTY,
     .help = "inject faults during the run, TYPE@T[:ARG][+DUR] each (see below); the recovery "
	     "is measured and the ack log checked"},
    MB_OPTION_QUIET(RA, quiet, 'q', "no progress lines"),
};

const struct mb_cmd_entry mb_cmd_run_entry = {
    .name = "run",
    .usage = "-s SCENARIO [--duration S] [--json FILE] [OPTIONS]",
    .summary = "headless run: table, JSON and CSV",
    .about = "Run a scenario without a screen: initialise the data directory if needed, start\n"
	     "the store and the load engine (and the storage test with --storage-test), print a\n"
	     "progress line to stderr every few seconds and the comparison table on stdout\n"
	     "(published columns beside this run's averages after warm-up).\n"
	     "In cached mode the warm-up lasts until every user's first download of its\n"
	     "mailbox is done (at most the warm-up plus half the rest of the run); the\n"
	     "output and the JSON (parameters.first_downloads) say when that was.\n"
	     "--target lab:dovecot starts a throwaway Dovecot + Postfix under DATA/lab instead,\n"
	     "provisions it over IMAP, runs the load with the imap driver and SMTP submission,\n"
	     "checks every acknowledged message over IMAP and stops the lab (with --tls\n"
	     "implicit or starttls: the lab with TLS, driven over imaps + smtps or STARTTLS,\n"
	     "its certificate trusted); --target\n"
	     "imap://HOST:PORT --submit smtp://HOST:PORT does the same against a server\n"
	     "started elsewhere (--server-pids or --server-cgroup for its counters).",
    .epilog = "faults (--fault, and the console's f key):\n"
	      "  kill-store@T               SIGKILL the store; restarted, it recovers\n"
	      "  disk-full@T[:SIZE][+DUR]   fill the data directory's file system (SIZE K/M/G;\n"
	      "                             default until full, only on one under 4 GiB; 20 s)\n"
	      "  io-error@T[:MODE][:FILES][+DUR]  fail the store's I/O (10 s): MODE eio\n"
	      "                             (reads and writes), enospc or fsync; FILES log\n"
	      "                             (default), db (database files) or all\n"
	      "  slow-disk@T[:MS][+DUR]     add MS ms to every store I/O (20 ms, 10 s)\n"
	      "  net-drop@T[:S]             the store stops reading for S s (5)\n"
	      "  low-disk@T[:MB][+DUR]      the store sees MB MiB free (0): its free-space\n"
	      "                             reserve refuses new content (10 s)\n"
	      "  T and DUR in seconds (suffix s or m)\n\n"
	      "The verdict fails when a threshold fails (failed actions: more than\n"
	      "thresholds.actions_failed_pct of done, default 0.1%), a storage group was in the\n"
	      "ERROR state, an acknowledged write was lost or a fault never recovered; the\n"
	      "first line of the report says why.\n\n"
	      "exit codes: 0 thresholds passed, 1 verdict fail, 2 usage or input error\n"
	      "(including a --json or --csv path that cannot be written), 3 runtime failure\n"
	      "(a child failed)",
    .opts = run_opts,
    .nopts = (int)(sizeof(run_opts) / sizeof(run_opts[0])),
    .args_size = sizeof(struct run_args),
    .init = mb_runopts_init,
    .check = run_check,
    .run = run_main,
};
