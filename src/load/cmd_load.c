/* cmd_load.c: `mailbench load`, the load engine as a command.
 *
 * Loads the scenario and the topology, starts the engine (engine.h), and
 * once per second collects what the loops measured: on --stats-fd one
 * stats line (counters of source MB_SRC_LOAD in "c", the window's
 * histograms in "h", per-action and per-operation counts and bytes in
 * "x"); without it, a summary table on stdout at the end (per action,
 * without a warmup: scheduled = done + failed + cut, "cut" being what the
 * stop found still queued or running; per-user-day figures use the
 * users' time up to the stop).  Stops after --duration seconds or on
 * SIGINT/SIGTERM.  Invariants: bad arguments or
 * an unreadable scenario/topology print one clear line and exit 2 before
 * anything starts; a run that could not start exits 3.
 */
#include "cmd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "core/cli.h"
#include "core/counters.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/stats.h"
#include "core/topology.h"
#include "load/engine.h"
#include "load/loadstats.h"

#define LAG_SATURATED_NS (50ull * 1000000u)    /* loop lag p99 above: saturated */
#define LATE_SATURATED_NS (1000ull * 1000000u) /* user timers this late: saturated */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mailbench load -s SCENARIO --target ADDR:PORT --topology FILE [options]\n"
		"\n"
		"Simulated Outlook users (online or cached mode, per the scenario) drive a\n"
		"mailbench store over its wire protocol, following the scenario's 8-hour day.\n"
		"\n"
		"  -s, --scenario NAME     online, cached or a path to a .cfg file (required)\n"
		"  -t, --target ADDR:PORT  the store (required)\n"
		"  -T, --topology FILE     DATA/topology.json written by mailbench init (required)\n"
		"  -u, --users N           simulated users: the first N of the topology\n"
		"                          (default: the scenario's run.users, at most the topology's)\n"
		"  -a, --accel X           compress the 8-hour day X times (default: the scenario's)\n"
		"  -d, --duration S        stop after S seconds (default: the scenario's; 0 = until a signal)\n"
		"  -r, --ramp S            spread logons over S seconds (default: the scenario's)\n"
		"  -j, --threads N         event loops (threads), users sharded over them\n"
		"                          (default: online CPUs)\n"
		"  -f, --stats-fd N        one stats line per second on file descriptor N\n"
		"  -A, --ack-log FILE      append '+ MAILBOX MID' for every acknowledged create,\n"
		"                          '- MAILBOX MID' for every acknowledged delete\n"
		"                          ('~ MAILBOX MID' when a delete was asked, before its reply)\n"
		"  -S, --seed N            random seed (default 1)\n"
		"  -w, --warmup S          leave the first S seconds out of the end summary\n"
		"                          (the stats stream always has every second; default 0)\n"
		"  -c, --compression on|off  ask for LZ4 compression (default: the scenario's)\n"
		"  -h, --help              this help\n"
		"\n"
		"exit codes: 0 ok, 2 usage or input error, 3 runtime failure\n");
}

struct run {
	struct mb_engine *eng;
	const struct mb_scenario *sc;
	struct mb_stats_writer *w;
	struct mb_load_stats *total, *win;
	uv_timer_t tick, end;
	uv_signal_t sigint, sigterm;
	int stopping;   /* stop_all ran: later signals are absorbed */
	double t_last, t0;
	struct mb_proc_sample ps_last;
	bool have_ps;
	int users;
	double accel;
	int stopped_by_signal;
	int write_failed;
	uint64_t saturated_windows, windows;
	double warmup_s;             /* totals (summary) start after this */
	bool warm;                   /* the warmup is over */
	double ud_warm;              /* user-days at the end of the warmup */
	struct mb_proc_sample ps_warm; /* process sample at the end of the warmup */
	bool have_ps_warm;
	int users_on_last;           /* users logged on at the last sample while running */
};

static int parse_target(const char *arg, char *host, size_t hlen, int *port)
{
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || !colon[1])
		return MB_EINVAL;
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535)
		return MB_EINVAL;
	size_t n = (size_t)(colon - arg);
	if (arg[0] == '[' && colon[-1] == ']') {
		arg++;
		n -= 2;
	}
	if (n == 0 || n >= hlen)
		return MB_EINVAL;
	char name[256];
	memcpy(name, arg, n);
	name[n] = '\0';
	/* names resolve once, here: the loops connect to a numeric address */
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	if (getaddrinfo(name, NULL, &hints, &res) != 0 || !res)
		return MB_ENOTFOUND;
	const void *a = res->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr
				: (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
	int ok = inet_ntop(res->ai_family, a, host, (socklen_t)hlen) != NULL;
	freeaddrinfo(res);
	*port = (int)p;
	return ok ? 0 : MB_EINVAL;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void add_extra(struct run *r, json_t *x)
{
	double ud = mb_engine_user_days(r->eng);
	json_object_set_new(x, "accel", json_real(r->accel));
	json_object_set_new(x, "mode", json_string(r->sc->mode == MB_MODE_CACHED ? "cached" : "online"));
	json_object_set_new(x, "users_configured", json_integer(r->users));
	json_object_set_new(x, "user_struct_bytes", json_integer((json_int_t)mb_engine_user_struct_bytes()));
	if (r->have_ps)
		json_object_set_new(x, "rss_bytes", json_integer((json_int_t)r->ps_last.rss_bytes));
	json_object_set_new(x, "user_days", json_real(ud));
	if (ud > 0) {
		json_object_set_new(x, "sent_per_user_day", json_real((double)r->total->n.msgs_sent / ud));
		json_object_set_new(x, "received_per_user_day",
				    json_real((double)r->total->n.deliveries / ud));
	}
}

static void sample(struct run *r, bool final)
{
	double now = mb_now_s();
	double dt = now - r->t_last;
	if (dt <= 0)
		dt = 1e-3;
	r->t_last = now;
	mb_load_stats_reset(r->win);
	mb_engine_collect(r->eng, r->win);
	/* the window that ends the warmup is still part of it */
	bool counted = r->warm;
	if (!r->warm && now - r->t0 >= r->warmup_s) {
		r->warm = true;
		r->ud_warm = mb_engine_user_days(r->eng);
		r->have_ps_warm = mb_proc_sample(0, &r->ps_warm) == 0;
	}
	if (counted)
		mb_load_stats_merge(r->total, r->win);

	double v[MB_COUNTER_COUNT] = {0};
	bool has[MB_COUNTER_COUNT] = {false};
	v[MB_C_USERS] = mb_engine_users_on(r->eng);
	has[MB_C_USERS] = true;
	if (!final)
		r->users_on_last = (int)v[MB_C_USERS];
	if (mb_hist_count(r->win->rpc) > 0) {
		v[MB_C_CLIENT_LATENCY] = mb_hist_mean_ns(r->win->rpc) / 1e6;
		has[MB_C_CLIENT_LATENCY] = true;
	}
	double score;
	if (mb_load_stats_score_ns(r->total, r->sc->actions_per_day, &score) == 0) {
		v[MB_C_LOADSIM_SCORE_MS] = score / 1e6;
		has[MB_C_LOADSIM_SCORE_MS] = true;
	}
	v[MB_C_ACTIONS] = (double)mb_load_stats_done(r->win) / dt;
	has[MB_C_ACTIONS] = true;
	v[MB_C_ACTIONS_FAILED] = (double)mb_load_stats_failed(r->win) / dt;
	has[MB_C_ACTIONS_FAILED] = true;
	bool saturated = false;
	if (mb_hist_count(r->win->loop_lag) > 0) {
		uint64_t p99 = mb_hist_percentile_ns(r->win->loop_lag, 99);
		v[MB_C_LOOP_LAG_MS] = (double)p99 / 1e6;
		has[MB_C_LOOP_LAG_MS] = true;
		saturated |= p99 > LAG_SATURATED_NS;
	}
	if (mb_hist_count(r->win->timer_late) > 0)
		saturated |= mb_hist_percentile_ns(r->win->timer_late, 99) > LATE_SATURATED_NS;
	v[MB_C_LOAD_SATURATED] = saturated ? 1 : 0;
	has[MB_C_LOAD_SATURATED] = true;
	if (counted) {
		r->windows++;
		r->saturated_windows += saturated;
	}
	struct mb_proc_sample ps;
	if (mb_proc_sample(0, &ps) == 0) {
		struct mb_proc_rates pr;
		if (r->have_ps && mb_proc_rates(&r->ps_last, &ps, &pr) == 0) {
			v[MB_C_LOAD_CPU_PCT] = pr.cpu_pct;
			has[MB_C_LOAD_CPU_PCT] = true;
		}
		r->ps_last = ps;
		r->have_ps = true;
	}
	if (!r->w)
		return;
	json_t *h = NULL, *x = NULL;
	if (mb_load_stats_hists_json(r->win, &h) != 0 || mb_load_stats_counts_json(r->win, &x) != 0) {
		json_decref(h);
		return;
	}
	add_extra(r, x);
	if (mb_stats_write(r->w, dt, v, has, h, x) != 0)
		r->write_failed = 1;
	json_decref(h);
	json_decref(x);
}

/* Stop the run's timers so the loop ends.  The signal handles stay open
 * (unreferenced) until the very end, so a second SIGTERM during the
 * shutdown (timeout(1) and process-group kills send two) is absorbed
 * instead of killing the process with the default action. */
static void stop_all(struct run *r)
{
	if (r->stopping)
		return;
	r->stopping = 1;
	uv_timer_stop(&r->tick);
	uv_timer_stop(&r->end);
	uv_close((uv_handle_t *)&r->tick, NULL);
	uv_close((uv_handle_t *)&r->end, NULL);
}

static void close_signals(struct run *r, uv_loop_t *loop)
{
	uv_close((uv_handle_t *)&r->sigint, NULL);
	uv_close((uv_handle_t *)&r->sigterm, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
}

static void tick_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	sample(r, false);
	if (r->write_failed) /* the supervisor is gone */
		stop_all(r);
}

static void end_cb(uv_timer_t *t)
{
	stop_all(t->data);
}

static void signal_cb(uv_signal_t *s, int signum)
{
	struct run *r = s->data;
	r->stopped_by_signal = signum;
	stop_all(r);
}

static void print_summary(struct run *r)
{
	struct mb_load_stats *t = r->total;
	double ud = mb_engine_user_days(r->eng) - r->ud_warm;
	printf("mailbench load: %s, %d users, accel %g, %.1f s", r->sc->title, r->users, r->accel,
	       mb_now_s() - r->t0);
	if (r->warmup_s > 0)
		printf(" (figures after a %.0f s warmup)", r->warmup_s);
	printf(", %.2f simulated user-days\n", ud);
	printf("users logged on at the end: %d of %d\n", r->users_on_last, r->users);
	printf("%-22s %10s %10s %8s %6s %6s %10s %10s %10s\n", "action", "scheduled", "done",
	       "failed", "late", "cut", "p50 ms", "p95 ms", "p99 ms");
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		if (!t->scheduled[a] && !t->done[a] && !t->failed[a] && r->sc->actions_per_day[a] <= 0)
			continue;
		printf("%-22s %10llu %10llu %8llu %6llu %6llu", mb_actions[a].label,
		       (unsigned long long)t->scheduled[a], (unsigned long long)t->done[a],
		       (unsigned long long)t->failed[a], (unsigned long long)t->late[a],
		       (unsigned long long)t->cut[a]);
		if (mb_hist_count(t->action[a]))
			printf(" %10.1f %10.1f %10.1f\n", mb_hist_percentile_ns(t->action[a], 50) / 1e6,
			       mb_hist_percentile_ns(t->action[a], 95) / 1e6,
			       mb_hist_percentile_ns(t->action[a], 99) / 1e6);
		else
			printf(" %10s %10s %10s\n", "n/a", "n/a", "n/a");
	}
	double score;
	if (mb_load_stats_score_ns(t, r->sc->actions_per_day, &score) == 0)
		printf("LoadSim score (weighted p95): %.1f ms\n", score / 1e6);
	else
		printf("LoadSim score (weighted p95): n/a\n");
	if (mb_hist_count(t->rpc))
		printf("RPC round trip: mean %.2f ms, p50 %.2f, p95 %.2f, p99 %.2f ms (%llu RPCs, %llu ops, "
		       "%llu ops failed)\n",
		       mb_hist_mean_ns(t->rpc) / 1e6, mb_hist_percentile_ns(t->rpc, 50) / 1e6,
		       mb_hist_percentile_ns(t->rpc, 95) / 1e6, mb_hist_percentile_ns(t->rpc, 99) / 1e6,
		       (unsigned long long)t->n.rpcs, (unsigned long long)t->n.ops,
		       (unsigned long long)t->n.op_errors);
	if (ud > 0)
		printf("messages per user-day: sent %.2f (scenario %.2f), received %.2f (scenario %.2f)\n",
		       t->n.msgs_sent / ud, r->sc->messages_sent_per_day, t->n.deliveries / ud,
		       r->sc->messages_received_per_day);
	printf("bytes on the wire: sent %llu, received %llu\n", (unsigned long long)t->n.bytes_sent,
	       (unsigned long long)t->n.bytes_received);
	printf("connections: logons %llu, logon failures %llu, connect failures %llu, lost %llu, "
	       "reconnects %llu\n",
	       (unsigned long long)t->n.logons, (unsigned long long)t->n.logon_failures,
	       (unsigned long long)t->n.connect_failures, (unsigned long long)t->n.connections_lost,
	       (unsigned long long)t->n.reconnects);
	if (r->sc->mode == MB_MODE_CACHED)
		printf("cached mode: syncs %llu (%llu items), local reads %llu, notifications %llu\n",
		       (unsigned long long)t->n.syncs, (unsigned long long)t->n.sync_items,
		       (unsigned long long)t->n.local_reads, (unsigned long long)t->n.notifications);
	if (r->have_ps)
		printf("memory: RSS %.1f MiB while running, %.0f bytes per simulated user (user state "
		       "%zu bytes)\n",
		       r->ps_last.rss_bytes / 1048576.0, (double)r->ps_last.rss_bytes / r->users,
		       mb_engine_user_struct_bytes());
	if (r->have_ps && r->have_ps_warm && r->ps_last.t > r->ps_warm.t) {
		int ncpu = 1;
		mb_online_cpus(&ncpu);
		printf("load engine CPU: %.1f%% of one core\n",
		       (r->ps_last.cpu_s - r->ps_warm.cpu_s) / (r->ps_last.t - r->ps_warm.t) * 100.0);
	}
	if (mb_hist_count(t->loop_lag))
		printf("load engine: loop lag p50 %.2f ms, p99 %.2f ms, max %.2f ms, saturated %llu of %llu s%s\n",
		       mb_hist_percentile_ns(t->loop_lag, 50) / 1e6,
		       mb_hist_percentile_ns(t->loop_lag, 99) / 1e6,
		       mb_hist_max_ns(t->loop_lag) / 1e6,
		       (unsigned long long)r->saturated_windows, (unsigned long long)r->windows,
		       r->saturated_windows ? " (results from a saturated load engine are misleading)"
					    : "");
}

int mb_cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, 's'}, {"target", required_argument, NULL, 't'},
		{"topology", required_argument, NULL, 'T'}, {"users", required_argument, NULL, 'u'},
		{"accel", required_argument, NULL, 'a'},    {"duration", required_argument, NULL, 'd'},
		{"ramp", required_argument, NULL, 'r'},     {"threads", required_argument, NULL, 'j'},
		{"stats-fd", required_argument, NULL, 'f'}, {"ack-log", required_argument, NULL, 'A'},
		{"seed", required_argument, NULL, 'S'},     {"compression", required_argument, NULL, 'c'},
		{"warmup", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
	};
	const char *scenario = NULL, *target = NULL, *topo_path = NULL, *ack_path = NULL;
	long users = -1, threads = -1, stats_fd = -1, seed = 1;
	double accel = -1, duration = -1, ramp = -1, warmup = 0;
	int compression = -1;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:t:T:u:a:d:r:j:f:A:S:c:w:h", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 's':
			scenario = optarg;
			break;
		case 't':
			target = optarg;
			break;
		case 'T':
			topo_path = optarg;
			break;
		case 'u':
			ok = !mb_cli_long("load", "--users", optarg, 1, 10000000, &users);
			break;
		case 'a':
			ok = !mb_cli_double("load", "--accel", optarg, 1e-3, 1e6, 0, &accel);
			break;
		case 'd':
			ok = !mb_cli_double("load", "--duration", optarg, 0, 1e9, 0, &duration);
			break;
		case 'r':
			ok = !mb_cli_double("load", "--ramp", optarg, 0, 1e7, 0, &ramp);
			break;
		case 'j':
			ok = !mb_cli_long("load", "--threads", optarg, 1, 1024, &threads);
			break;
		case 'f':
			ok = !mb_cli_long("load", "--stats-fd", optarg, 0, 1 << 20, &stats_fd);
			break;
		case 'A':
			ack_path = optarg;
			break;
		case 'w':
			ok = !mb_cli_double("load", "--warmup", optarg, 0, 1e9, 0, &warmup);
			break;
		case 'S':
			ok = !mb_cli_long("load", "--seed", optarg, 0, 0x7fffffffL, &seed);
			break;
		case 'c':
			if (!strcmp(optarg, "on"))
				compression = 1;
			else if (!strcmp(optarg, "off"))
				compression = 0;
			else {
				fprintf(stderr, "mailbench load: --compression: '%s' must be on or off\n",
					optarg);
				return MB_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return MB_EXIT_OK;
		case ':':
			fprintf(stderr, "mailbench load: option %s needs a value\n", argv[optind - 1]);
			return MB_EXIT_USAGE;
		default:
			fprintf(stderr, "mailbench load: unknown option %s (see --help)\n", argv[optind - 1]);
			return MB_EXIT_USAGE;
		}
		if (!ok)
			return MB_EXIT_USAGE;
	}
	if (mb_cli_no_operands("load", argc, argv))
		return MB_EXIT_USAGE;
	if (!scenario || !target || !topo_path) {
		fprintf(stderr, "mailbench load: --scenario, --target and --topology are required (see --help)\n");
		return MB_EXIT_USAGE;
	}
	char host[INET6_ADDRSTRLEN + 1];
	int port;
	if (parse_target(target, host, sizeof(host), &port) != 0) {
		fprintf(stderr, "mailbench load: bad --target '%s': expected ADDR:PORT\n", target);
		return MB_EXIT_USAGE;
	}
	static struct mb_scenario sc;
	struct mb_cfg_error cerr;
	int rc = mb_scenario_load(scenario, &sc, &cerr);
	if (rc != 0) {
		char line[MB_PATH_MAX + 512];
		if (rc == MB_ECONFIG)
			mb_cfg_error_format(&cerr, line, sizeof(line));
		else
			snprintf(line, sizeof(line), "%s: %s", scenario, mb_strerror(rc));
		fprintf(stderr, "mailbench load: %s\n", line);
		return MB_EXIT_USAGE;
	}
	struct mb_topology *topo = NULL;
	char terr[1024] = "";
	rc = mb_topology_read(topo_path, &topo, terr, sizeof(terr));
	if (rc != 0) {
		fprintf(stderr, "mailbench load: --topology: %s\n", terr[0] ? terr : mb_strerror(rc));
		return MB_EXIT_USAGE;
	}
	int tusers = mb_topology_user_count(topo);
	if (users > tusers) {
		fprintf(stderr, "mailbench load: --users %ld: the topology %s has only %d users\n", users,
			topo_path, tusers);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	if (users < 0)
		users = sc.run_users < tusers ? sc.run_users : tusers;
	if (threads < 0) {
		int n = 1;
		threads = mb_online_cpus(&n) == 0 && n > 0 ? n : 1;
	}
	if (accel < 0)
		accel = sc.accel;
	if (duration < 0)
		duration = sc.duration_s;
	if (ramp < 0)
		ramp = sc.ramp_s;
	if (compression < 0)
		compression = sc.compression;

	int ack_fd = -1;
	if (ack_path) {
		ack_fd = open(ack_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (ack_fd < 0) {
			fprintf(stderr, "mailbench load: --ack-log %s: %s\n", ack_path, strerror(errno));
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
	}
	struct run r;
	memset(&r, 0, sizeof(r));
	r.sc = &sc;
	r.users = (int)users;
	r.accel = accel;
	r.warmup_s = warmup;
	r.warm = warmup <= 0;
	int exit_code = MB_EXIT_OK;
	if (stats_fd >= 0 && (rc = mb_stats_writer_create((int)stats_fd, "load", &r.w)) != 0) {
		fprintf(stderr, "mailbench load: --stats-fd %ld: %s\n", stats_fd, mb_strerror(rc));
		exit_code = MB_EXIT_USAGE;
		goto out;
	}
	raise_nofile();
	struct mb_engine_opts eo = {
		.sc = &sc, .topo = topo, .host = host, .port = port, .users = (int)users,
		.accel = accel, .ramp_s = ramp, .threads = (int)threads, .seed = (uint64_t)seed,
		.ack_fd = ack_fd, .compression = compression != 0, .notify = true,
	};
	if ((rc = mb_load_stats_create(&r.total)) != 0 || (rc = mb_load_stats_create(&r.win)) != 0 ||
	    (rc = mb_engine_create(&eo, &r.eng)) != 0) {
		fprintf(stderr, "mailbench load: cannot set up the engine: %s\n", mb_strerror(rc));
		exit_code = MB_EXIT_RUNTIME;
		goto out;
	}
	uv_loop_t *loop = uv_default_loop();
	uv_timer_init(loop, &r.tick);
	uv_timer_init(loop, &r.end);
	uv_signal_init(loop, &r.sigint);
	uv_signal_init(loop, &r.sigterm);
	r.tick.data = r.end.data = r.sigint.data = r.sigterm.data = &r;
	if ((rc = mb_engine_start(r.eng)) != 0) {
		fprintf(stderr, "mailbench load: cannot start: %s\n", mb_strerror(rc));
		exit_code = MB_EXIT_RUNTIME;
		stop_all(&r);
		close_signals(&r, loop);
		uv_loop_close(loop);
		goto out;
	}
	r.t0 = r.t_last = mb_now_s();
	if (r.warm)
		r.have_ps_warm = mb_proc_sample(0, &r.ps_warm) == 0;
	uv_timer_start(&r.tick, tick_cb, 1000, 1000);
	if (duration > 0)
		uv_timer_start(&r.end, end_cb, (uint64_t)(duration * 1000), 0);
	uv_signal_start(&r.sigint, signal_cb, SIGINT);
	uv_signal_start(&r.sigterm, signal_cb, SIGTERM);
	uv_unref((uv_handle_t *)&r.sigint);
	uv_unref((uv_handle_t *)&r.sigterm);
	uv_run(loop, UV_RUN_DEFAULT);
	mb_engine_stop(r.eng);
	sample(&r, true);
	if (r.w)
		mb_stats_write_end(r.w);
	else
		print_summary(&r);
	close_signals(&r, loop);
	uv_loop_close(loop);
out:
	mb_engine_destroy(r.eng);
	mb_load_stats_destroy(r.total);
	mb_load_stats_destroy(r.win);
	mb_stats_writer_destroy(r.w);
	mb_topology_destroy(topo);
	if (ack_fd >= 0)
		close(ack_fd);
	return exit_code;
}
