/* cmd_run.c: `mailbench run`, the headless run: initialise if needed,
 * start the store and the load engine (and the storage test if asked),
 * print a progress line to stderr every few seconds, then the comparison
 * table on stdout (the console's table code), JSON and CSV.
 * Exit codes: 0 thresholds passed, 1 failed, 2 usage, 3 runtime failure.
 * Invariant: no child survives the command, whatever the exit path. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "core/cli.h"
#include "core/error.h"
#include "report/compare.h"
#include "report/runopts.h"
#include "report/session.h"
#include "report/supervisor.h"

#define PROGRESS_S 5

struct run_ctx {
	uv_loop_t loop;
	struct mb_session *s;
	uv_timer_t progress, poll;
	uv_signal_t sigint, sigterm;
	int signals;
	bool quiet;
};

static void run_usage(FILE *f)
{
	fprintf(f, "usage: mailbench run -s SCENARIO [OPTIONS]\n\n"
		   "Run a scenario without a screen: initialise the data directory if\n"
		   "needed, start the store and the load engine, and print the comparison\n"
		   "table (published columns beside this run's averages after warm-up).\n\n");
	mb_runopts_help(f);
	fprintf(f, "  -d, --duration S        seconds of load (default: the scenario's)\n"
		   "      --warmup S          seconds excluded from the averages, shorter than\n"
		   "                          the run (default: the scenario's, or a third of\n"
		   "                          a run shorter than twice that)\n"
		   "      --storage-test      run the storage test during the load\n"
		   "      --threads N         storage test threads (default: storage.cfg's first)\n"
		   "      --json FILE         write the run summary as JSON (docs/run-json.md)\n"
		   "      --csv FILE          write one row per second per counter\n"
		   "      --no-save           do not save the summary in DATA/runs/\n"
		   "  -q, --quiet             no progress lines\n"
		   "  -h, --help              this help\n\n"
		   "exit codes: 0 thresholds passed, 1 thresholds failed, 2 usage or input error,\n"
		   "3 runtime failure (a child failed)\n");
}

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
static void print_report(struct mb_session *s, const struct mb_run_summary *sum, FILE *f)
{
	const struct mb_scenario *sc = mb_session_scenario(s);
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
	struct mb_table *t;
	fprintf(f,
		"%s: %d users, scale %g, accel %g, compression %s, %.0f s measured after %.0f s "
		"warm-up\n\n",
		sc->title, sum->users, sum->scale, sum->accel, sum->compression ? "on" : "off",
		sum->measured_s, sum->warmup_s);
	if (mb_compare_build(&in, &t) == 0) {
		mb_table_print(t, f, table_width());
		mb_table_destroy(t);
	}
	fprintf(f, "\n");
	char val[32];
	static const enum mb_counter_id beside[] = {
	    MB_C_MACHINE_CPU_PCT,     MB_C_LOAD_CPU_PCT, MB_C_SYSTEM_CONTEXT_SWITCHES,
	    MB_C_DELIVERY_RECIPIENTS, MB_C_RPC_PER_S,	 MB_C_DB_CACHE_HIT_PCT,
	    MB_C_STORE_RSS_MB,	      MB_C_ACTIONS,	 MB_C_ACTIONS_FAILED,
	    MB_C_LOOP_LAG_MS,	      MB_C_STRESS_IOPS,	 MB_C_STRESS_READ_MS,
	    MB_C_STRESS_LOG_MS};
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		enum mb_counter_id id = beside[i];
		if (mb_counters[id].source == MB_SRC_STRESS && !sum->storage_test)
			continue;
		mb_format_value(id, sum->has[id], sum->avg[id], val, sizeof(val));
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
	fprintf(f, "\n%-22s %9s %9s %9s %9s %8s %8s %8s\n", "action", "scheduled", "done", "failed",
		"/user-day", "p50 ms", "p95 ms", "p99 ms");
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		const struct mb_action_figures *a = &sum->actions[i];
		char sch[16] = "n/a", dn[16] = "n/a", fl[16] = "n/a", pud[16] = "n/a";
		char p50[16] = "n/a", p95[16] = "n/a", p99[16] = "n/a";
		if (a->has_counts) {
			snprintf(sch, sizeof(sch), "%.0f", a->scheduled);
			snprintf(dn, sizeof(dn), "%.0f", a->done);
			snprintf(fl, sizeof(fl), "%.0f", a->failed);
		}
		if (a->has_per_user_day)
			snprintf(pud, sizeof(pud), "%.2f", a->per_user_day);
		if (a->latency.has) {
			snprintf(p50, sizeof(p50), "%.1f", a->latency.p50_ms);
			snprintf(p95, sizeof(p95), "%.1f", a->latency.p95_ms);
			snprintf(p99, sizeof(p99), "%.1f", a->latency.p99_ms);
		}
		fprintf(f, "%-22s %9s %9s %9s %9s %8s %8s %8s\n", mb_actions[i].label, sch, dn, fl,
			pud, p50, p95, p99);
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
		if (thr->cmp == MB_CMP_NONE)
			continue;
		char th[48];
		mb_threshold_text(thr, (enum mb_counter_id)i, th, sizeof(th));
		mb_format_value((enum mb_counter_id)i, sum->has[i], sum->avg[i], val, sizeof(val));
		fprintf(f, "  %-30s %-12s %12s  %s\n", mb_counters[i].label, th, val,
			mb_verdict_str(sum->verdict[i]));
		nth++;
	}
	if (sum->storage_test)
		fprintf(f, "  %-30s read < %.2f ms, log write < %.2f ms: %s\n", "storage test",
			sum->thresholds.storage_read_ms_max, sum->thresholds.storage_log_ms_max,
			mb_verdict_str(sum->storage_verdict));
	else if (nth == 0)
		fprintf(f, "  none set\n");
	if (sum->failed)
		fprintf(f, "\nRUN FAILED: %s\n", sum->failure);
	fprintf(f, "\nverdict: %s\n", mb_verdict_str(sum->overall));
}

int mb_cmd_run(int argc, char **argv)
{
	struct mb_session_params p;
	mb_session_params_default(&p);
	const char *json_path = NULL, *csv_path = NULL;
	bool storage = false, quiet = false;
	enum { O_JSON = 1000, O_CSV, O_STORAGE, O_THREADS, O_WARMUP, O_NOSAVE };
	static const struct option extra[] = {{"duration", required_argument, NULL, 'd'},
					      {"warmup", required_argument, NULL, O_WARMUP},
					      {"storage-test", no_argument, NULL, O_STORAGE},
					      {"threads", required_argument, NULL, O_THREADS},
					      {"json", required_argument, NULL, O_JSON},
					      {"csv", required_argument, NULL, O_CSV},
					      {"no-save", no_argument, NULL, O_NOSAVE},
					      {"quiet", no_argument, NULL, 'q'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	struct option opts[MB_RUNOPTS_MAX + 16];
	mb_runopts_table(opts, extra);
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":" MB_RUNOPTS_SHORT "d:qh", opts, NULL)) != -1) {
		int rc = mb_runopts_parse("run", c, optarg, &p);
		if (rc == 0)
			continue;
		if (rc != MB_ENOTFOUND)
			return MB_EXIT_USAGE;
		long n;
		switch (c) {
		case 'd':
			if (mb_cli_double("run", "--duration", optarg, 0, 1e9, 1, &p.duration_s))
				return MB_EXIT_USAGE;
			break;
		case O_WARMUP:
			if (mb_cli_double("run", "--warmup", optarg, 0, 1e9, 0, &p.warmup_s))
				return MB_EXIT_USAGE;
			break;
		case O_STORAGE:
			storage = true;
			break;
		case O_THREADS:
			if (mb_cli_long("run", "--threads", optarg, 1, 256, &n))
				return MB_EXIT_USAGE;
			p.stress_threads = (int)n;
			break;
		case O_JSON:
			json_path = optarg;
			break;
		case O_CSV:
			csv_path = optarg;
			break;
		case O_NOSAVE:
			p.save_runs = false;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			run_usage(stdout);
			return MB_EXIT_OK;
		case ':':
			fprintf(stderr, "mailbench run: %s needs a value\n", argv[optind - 1]);
			return MB_EXIT_USAGE;
		default:
			fprintf(stderr, "mailbench run: unknown option '%s'\n", argv[optind - 1]);
			run_usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mailbench run: unexpected argument '%s'\n", argv[optind]);
		return MB_EXIT_USAGE;
	}

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

	signal(SIGSEGV, crash_handler);
	signal(SIGABRT, crash_handler);
	signal(SIGBUS, crash_handler);
	signal(SIGPIPE, SIG_IGN);
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
		if (json_path && mb_summary_write(sum, json_path))
			fprintf(stderr, "mailbench run: cannot write %s\n", json_path);
		if (csv_path && mb_csv_write_file(mb_session_series(r.s),
						  mb_session_load_offset(r.s), csv_path))
			fprintf(stderr, "mailbench run: cannot write %s\n", csv_path);
		if (mb_session_saved_path(r.s)[0] && !quiet)
			fprintf(stderr, "mailbench run: summary saved in %s\n",
				mb_session_saved_path(r.s));
		exit_code = sum->failed			      ? MB_EXIT_RUNTIME
			    : sum->overall == MB_VERDICT_FAIL ? MB_EXIT_THRESHOLDS
							      : MB_EXIT_OK;
	}
	free(sum);
	uv_close((uv_handle_t *)&r.sigint, NULL);
	uv_close((uv_handle_t *)&r.sigterm, NULL);
	uv_close((uv_handle_t *)&r.progress, NULL);
	uv_close((uv_handle_t *)&r.poll, NULL);
	mb_session_destroy(r.s);
	uv_run(&r.loop, UV_RUN_DEFAULT);
	uv_loop_close(&r.loop);
	return exit_code;
}
