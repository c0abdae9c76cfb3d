/* cmd_capacity.c: `mailbench capacity`, the capacity search without a
 * screen (capacity.h): progress on stderr, the curve and the answer on
 * stdout, the JSON (docs/capacity-json.md) in --json FILE and in
 * DATA/capacity/ID.json.  Exit codes: 0 the search finished (whatever the
 * knee), 2 usage or input error, 3 a run failed.
 * Invariant: no child survives the command (SIGINT/SIGTERM stop the
 * search; a second signal kills the children). */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "cmd.h"
#include "core/sig.h"
#include "core/options.h"
#include "core/error.h"
#include "report/capacity.h"
#include "report/report.h"
#include "report/supervisor.h"

struct cap_ctx {
	uv_loop_t loop;
	struct mb_capacity *c;
	uv_signal_t sigint, sigterm;
	uv_timer_t poll;
	int signals;
	bool quiet;
	bool read; /* the main loop has read the finished search's results */
};

static void on_message(void *arg, struct mb_capacity *c, const char *m)
{
	struct cap_ctx *r = arg;
	(void)c;
	if (!r->quiet)
		fprintf(stderr, "mailbench capacity: %s\n", m);
}

static void on_signal(uv_signal_t *h, int sig)
{
	struct cap_ctx *r = h->data;
	if (++r->signals == 1) {
		fprintf(stderr, "mailbench capacity: %s: stopping (again to kill)\n",
			strsignal(sig));
		mb_capacity_stop(r->c);
	} else {
		mb_sup_emergency_kill();
		uv_stop(&r->loop);
	}
}

static void on_poll(uv_timer_t *t)
{
	struct cap_ctx *r = t->data;
	/* only once the results were read: the search can finish and this
	 * timer fire in one loop iteration (a first step that finds the load
	 * engine saturated ends at once), and destroying it first lost the
	 * JSON (no --json file, exit 0) */
	if (!mb_capacity_active(r->c) && r->read) {
		uv_timer_stop(t);
		uv_close((uv_handle_t *)&r->sigint, NULL);
		uv_close((uv_handle_t *)&r->sigterm, NULL);
		mb_signals_absorb(); /* a late second SIGTERM must not cut the exit */
		uv_close((uv_handle_t *)&r->poll, NULL);
		mb_capacity_destroy(r->c);
		r->c = NULL;
	}
}

static void fmt(char *b, size_t n, bool has, double v, int dec)
{
	if (has)
		snprintf(b, n, "%.*f", dec, v);
	else
		snprintf(b, n, "n/a");
}

static void print_curve(const struct mb_capacity *c, FILE *f)
{
	fprintf(f, "%4s %-6s %6s %8s %8s %8s %20s %6s %5s %6s %6s %8s %8s %7s %4s %s\n", "step",
		"phase", "users", "accel", "UE", "score", "RPC p50/p95/p99 ms", "store%", "net%",
		"mach%", "steal%", "ops/s", "expect", "failed", "sat", "within limit");
	for (size_t i = 0; i < mb_capacity_step_count(c); i++) {
		const struct mb_capacity_step *s = mb_capacity_step_at(c, i);
		char sc[16], lat[40], cpu[16], lc[16], mc[16], stl[16], ops[16], ex[16];
		fmt(sc, sizeof(sc), s->has_score, s->score_ms, 0);
		if (s->has_rpc)
			snprintf(lat, sizeof(lat), "%.1f/%.1f/%.1f", s->rpc_p50_ms, s->rpc_p95_ms,
				 s->rpc_p99_ms);
		else
			snprintf(lat, sizeof(lat), "n/a");
		fmt(cpu, sizeof(cpu), s->has_cpu, s->store_cpu_pct, 1);
		fmt(lc, sizeof(lc), s->has_loop, s->loop_cpu_pct, 0);
		fmt(mc, sizeof(mc), s->has_mcpu, s->machine_cpu_pct, 1);
		fmt(stl, sizeof(stl), s->has_steal, s->steal_pct, 1);
		fmt(ops, sizeof(ops), s->has_ops, s->rpc_ops_per_s, 0);
		fmt(ex, sizeof(ex), s->rpc_ops_expected_per_s >= 0, s->rpc_ops_expected_per_s, 0);
		fprintf(f,
			"%4zu %-6s %6d %8.3g %8.0f %8s %20s %6s %5s %6s %6s %8s %8s %7.0f %4s "
			"%s%s%s%s\n",
			i + 1, s->phase, s->users, s->accel, s->ue, sc, lat, cpu, lc, mc, stl, ops,
			ex, s->failed_actions, s->saturated ? "yes" : "no", s->pass ? "yes" : "no",
			s->pass ? "" : ": ", s->limited_by, mb_capacity_step_marks(s));
	}
}

struct capacity_args {
	struct mb_capacity_params p;
	const char *limit, *json;
	bool quiet;
	bool to_given;
};

static void capacity_init(void *args)
{
	struct capacity_args *a = args;
	mb_capacity_params_default(&a->p);
}

/* --limit "score=1000ms,cpu=80%": every limit must hold. */
static int parse_limits(const char *text, struct mb_capacity_params *p)
{
	char buf[256], why[512];
	snprintf(buf, sizeof(buf), "%s", text);
	p->nlimits = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (p->nlimits == MB_CAPACITY_MAX_LIMITS) {
			fprintf(stderr, "mailbench capacity: --limit: at most %d limits\n",
				MB_CAPACITY_MAX_LIMITS);
			return MB_EXIT_USAGE;
		}
		if (mb_capacity_limit_parse(t, &p->limit[p->nlimits], why, sizeof(why))) {
			fprintf(stderr, "mailbench capacity: --limit: %s\n", why);
			return MB_EXIT_USAGE;
		}
		p->nlimits++;
	}
	return 0;
}

static int capacity_check(void *args)
{
	struct capacity_args *a = args;
	if (a->limit && parse_limits(a->limit, &a->p))
		return MB_EXIT_USAGE;
	if (a->p.to_ue < a->p.from_ue && !a->to_given)
		a->p.to_ue = a->p.from_ue; /* --from above the default --to: one load */
	if (a->p.to_ue < a->p.from_ue) {
		fprintf(stderr, "mailbench capacity: --to %g is below --from %g\n", a->p.to_ue,
			a->p.from_ue);
		return MB_EXIT_USAGE;
	}
	return 0;
}

static int capacity_main(void *args, int argc, char **argv)
{
	struct capacity_args *a = args;
	(void)argc;
	(void)argv;
	struct mb_capacity_params p = a->p;
	const char *json_path = a->json;
	bool quiet = a->quiet;
	struct cap_ctx r;
	memset(&r, 0, sizeof(r));
	r.quiet = quiet;
	if (uv_loop_init(&r.loop))
		return MB_EXIT_RUNTIME;
	static const struct mb_capacity_events ev = {NULL, on_message};
	if (mb_capacity_create(&r.loop, &ev, &r, &r.c)) {
		uv_loop_close(&r.loop);
		return MB_EXIT_RUNTIME;
	}
	uv_signal_init(&r.loop, &r.sigint);
	uv_signal_init(&r.loop, &r.sigterm);
	uv_timer_init(&r.loop, &r.poll);
	r.sigint.data = r.sigterm.data = r.poll.data = &r;
	uv_signal_start(&r.sigint, on_signal, SIGINT);
	uv_signal_start(&r.sigterm, on_signal, SIGTERM);
	struct mb_cfg_error err;
	memset(&err, 0, sizeof(err));
	int rc = mb_capacity_start(r.c, &p, &err);
	int exit_code = MB_EXIT_OK;
	if (rc) {
		if ((rc == MB_ECONFIG || rc == MB_ENOTFOUND) && (err.message[0] || err.file[0])) {
			char m[8192];
			mb_cfg_error_format(&err, m, sizeof(m));
			fprintf(stderr, "mailbench capacity: %s\n", m);
			exit_code = MB_EXIT_USAGE;
		} else {
			fprintf(stderr, "mailbench capacity: cannot start: %s\n", mb_strerror(rc));
			exit_code = MB_EXIT_RUNTIME;
		}
		mb_capacity_stop(r.c);
	}
	uv_timer_start(&r.poll, on_poll, 200, 200);
	/* the results are read before the search is destroyed (on_poll) */
	json_t *result = NULL;
	while (r.c && uv_run(&r.loop, UV_RUN_ONCE)) {
		if (r.c && !mb_capacity_active(r.c) && !result && exit_code == MB_EXIT_OK) {
			result = mb_capacity_json(r.c);
			if (mb_capacity_state(r.c) == MB_CAP_FAILED)
				exit_code = MB_EXIT_RUNTIME;
			print_curve(r.c, stdout);
			printf("\n%s\n", mb_capacity_answer(r.c));
			fflush(stdout);
		}
		if (r.c && !mb_capacity_active(r.c))
			r.read = true;
	}
	uv_run(&r.loop, UV_RUN_DEFAULT);
	uv_loop_close(&r.loop);
	if (result) {
		char dir[MB_PATH_MAX + 16], path[MB_PATH_MAX + 96];
		snprintf(dir, sizeof(dir), "%s/capacity", p.data_dir);
		const char *started = json_string_value(json_object_get(result, "started"));
		char id[40] = "";
		for (size_t i = 0, o = 0; started && started[i] && o + 1 < sizeof(id); i++)
			if (started[i] != ':' && started[i] != '-')
				id[o++] = started[i] == 'T' ? '-' : started[i];
		snprintf(path, sizeof(path), "%s/%.15s-%s.json", dir, id,
			 json_string_value(
			     json_object_get(json_object_get(result, "scenario"), "name")));
		const char *outs[2] = {json_path, path};
		if (mkdir(dir, 0755) && errno != EEXIST)
			outs[1] = NULL;
		for (int k = 0; k < 2; k++) {
			if (!outs[k])
				continue;
			if (mb_json_write_file(result, outs[k])) {
				fprintf(stderr, "mailbench capacity: cannot write %s\n", outs[k]);
				exit_code = MB_EXIT_RUNTIME;
			} else if (!quiet) {
				fprintf(stderr, "mailbench capacity: wrote %s\n", outs[k]);
			}
		}
		json_decref(result);
	}
	return exit_code;
}

#define CAA struct capacity_args
static const struct mb_opt capacity_opts[] = {
    MB_OPTION_SCENARIO(CAA, p.scenario, "", MB_OPT_REQ, NULL),
    {.path = "limit",
     .flag = "limit",
     .metavar = "L[,L...]",
     .type = MB_OT_ARG,
     .off = offsetof(CAA, limit),
     .flags = MB_OPT_NONEMPTY,
     .dtext = "score=1000ms",
     .help = "score=MSms (LoadSim score), latency=MSms (client latency, mean RPC round "
	     "trip), p95=MSms (RPC p95), cpu=PCT% (store processor time); all must hold"},
    {.path = "from",
     .flag = "from",
     .dtext = "8000",
     .metavar = "UE",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.from_ue),
     .def = 8000,
     .min = 0,
     .max = 1e8,
     .flags = MB_OPT_LO_OPEN,
     .help = "first load, in user-equivalents (users x accel)"},
    {.path = "to",
     .flag = "to",
     .dtext = "2048000",
     .metavar = "UE",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.to_ue),
     .def = 2048000,
     .min = 0,
     .max = 1e8,
     .flags = MB_OPT_LO_OPEN | MB_OPT_HAS,
     .aux = offsetof(CAA, to_given),
     .help = "largest load tried (not below --from)"},
    {.path = "max-users",
     .flag = "max-users",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(CAA, p.max_users),
     .def = 0,
     .min = MB_USERS_MIN,
     .max = MB_USERS_MAX,
     .dtext = "the fd budget, at most 200",
     .help = "real users at most; acceleration offers the rest"},
    MB_OPTION_WARMUP(CAA, p.warmup_s, 0, 15, "15"),
    {.path = "measure",
     .flag = "measure",
     .dtext = "30",
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.measure_s),
     .def = 30,
     .min = 1,
     .max = MB_DURATION_MAX,
     .help = "measured seconds of each ramp step, after its warm-up"},
    {.path = "bisect-measure",
     .flag = "bisect-measure",
     .dtext = "60",
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.bisect_measure_s),
     .def = 60,
     .min = 1,
     .max = MB_DURATION_MAX,
     .help = "measured seconds of each bisection step (the steps that place the knee), "
	     "after its warm-up"},
    {.path = "max-steps",
     .flag = "max-steps",
     .dtext = "16",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(CAA, p.max_steps),
     .def = 16,
     .min = 1,
     .max = MB_CAPACITY_MAX_STEPS,
     .help = "steps in all (ramp, bisection and the runs again of --confirm)"},
    {.path = "confirm",
     .flag = "confirm",
     .dtext = "1",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(CAA, p.confirm),
     .def = 1,
     .min = 0,
     .max = 4,
     .help = "run a failing step again up to N times at the same load; it fails only "
	     "when every run fails (a passing stall of the machine does not set the knee)"},
    {.path = "steal-limit",
     .flag = "steal-limit",
     .dtext = "2",
     .metavar = "PCT",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.steal_limit_pct),
     .def = 2,
     .min = 0,
     .max = 100,
     .help = "a failing run with the machine's steal time at or above PCT% is disturbed: "
	     "it is not counted and the load runs again (at most 2 runs more; 100: never)"},
    {.path = "steal-far-over",
     .flag = "steal-far-over",
     .dtext = "2",
     .metavar = "X",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.far_over),
     .def = MB_CAPACITY_FAR_OVER,
     .min = 0,
     .max = 1000,
     .help = "a failing run X times over its limit or more counts whatever the steal "
	     "(it is not disturbed; 0: any failure can be)"},
    {.path = "tolerance",
     .flag = "tolerance",
     .dtext = "0.10",
     .metavar = "F",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.tolerance),
     .def = 0.10,
     .min = 0.001,
     .max = 1,
     .help = "bisect until the knee is known within this fraction"},
    {.path = "max-time",
     .flag = "max-time",
     .dtext = "840",
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(CAA, p.max_time_s),
     .def = 840,
     .min = 0,
     .max = MB_DURATION_MAX,
     .help = "start no step after this many seconds (0: no limit)"},
    MB_OPTION_SCALE(CAA, p.scale, 0),
    MB_OPTION_COMPRESSION(CAA, p.compression, 0, -1, "the scenario's run.compression"),
    MB_OPTION_DATA(CAA, p.data_dir, 0, 0, MB_DEFAULT_DATA_DIR),
    MB_OPTION_TARGET(CAA, p.target, 0, "the scenario's target (mailbench's own store)"),
    MB_OPTION_JSON(CAA, json, "write the search as JSON (docs/capacity-json.md)"),
    MB_OPTION_QUIET(CAA, quiet, 'q', "no progress lines"),
};

const struct mb_cmd_entry mb_cmd_capacity_entry = {
    .name = "capacity",
    .usage = "-s SCENARIO [--target T] [--limit score=1000ms] [--from UE] [--to UE] [OPTIONS]",
    .summary = "capacity search: the largest load under a limit, and the curve",
    .about = "Find the largest load the store carries under a limit.  The load, in\n"
	     "user-equivalents (UE = users x acceleration), doubles from --from until a step\n"
	     "fails a limit or the load engine saturates, then the knee is bisected.  Real\n"
	     "users first (up to --max-users), acceleration for the rest.  Each step is a fresh\n"
	     "run (store and load engine) with its warm-up and measured window.  A saturated\n"
	     "load engine never counts as the server's limit.  The curve and the answer go to\n"
	     "stdout, the JSON to --json and DATA/capacity/.",
    .epilog = "exit codes: 0 the search finished, 2 usage or input error, 3 a run failed",
    .opts = capacity_opts,
    .nopts = (int)(sizeof(capacity_opts) / sizeof(capacity_opts[0])),
    .args_size = sizeof(struct capacity_args),
    .init = capacity_init,
    .check = capacity_check,
    .run = capacity_main,
};
