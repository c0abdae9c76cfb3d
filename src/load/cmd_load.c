/* cmd_load.c: `mailbench load`, the load engine as a command.
 *
 * Loads the scenario and the topology, starts the engine (engine.h), and
 * once per second has loadout.c collect what the loops measured: on
 * --stats-fd one stats line; without it, a summary table on stdout at the
 * end (per action, without a warmup: scheduled = done + failed + cut,
 * "cut" being what the stop found still queued or running).  Stops after
 * --duration seconds or on SIGINT/SIGTERM.  Invariants: bad arguments or
 * an unreadable scenario/topology print one clear line and exit 2 before
 * anything starts; a run that could not start exits 3.
 */
#include "cmd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "core/sig.h"
#include "core/options.h"
#include "core/counters.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/stats.h"
#include "core/tls.h"
#include "core/topology.h"
#include "load/distload.h"
#include "load/engine.h"
#include "load/loadstats.h"
#include "load/target.h"
#include "load/loadrun_int.h"

/* "NAME:PORT" -> numeric "ADDR:PORT" (names resolve once, here: the
 * loops connect to a numeric address). */
static int resolve_address(const char *arg, char *out, size_t outlen)
{
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || !colon[1])
		return MB_EINVAL;
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535)
		return MB_EINVAL;
	char host[INET6_ADDRSTRLEN + 1];
	size_t hlen = sizeof(host);
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
	bool v6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	if (ok)
		snprintf(out, outlen, v6 ? "[%s]:%ld" : "%s:%ld", host, p);
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

/* Stop the run's timers so the loop ends.  The signal handles stay open
 * (unreferenced) until the very end, so a second SIGTERM during the
 * shutdown (timeout(1) and process-group kills send two) is absorbed
 * instead of killing the process with the default action; when they
 * close, mb_signals_absorb (core/sig.h) ignores a later one. */
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
	uv_close((uv_handle_t *)&r->sigusr1, NULL);
	mb_signals_absorb(); /* a late second SIGTERM must not cut the exit */
	uv_run(loop, UV_RUN_DEFAULT);
}

static void tick_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	mb__load_sample(r, false);
	if (r->write_failed) /* the supervisor is gone */
		r->want_stop = true;
	/* --mpi: every rank stops at the same window, when any rank asks */
	if (r->dist ? r->dist_stop : r->want_stop)
		stop_all(r);
	else if (r->dist) {
		/* the next window a second after this exchange ended, which
		 * every rank left together: no rank waits for a late one */
		uv_update_time(t->loop);
		uv_timer_start(t, tick_cb, 1000, 1000);
	}
}

static void end_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	r->want_stop = true;
	if (!r->dist)
		stop_all(r);
}

/* SIGINT, SIGTERM; and SIGUSR1, which mpirun forwards to every rank (its
 * SIGTERM kills the job after a second, too soon for the last window). */
static void signal_cb(uv_signal_t *s, int signum)
{
	struct run *r = s->data;
	r->stopped_by_signal = signum;
	r->want_stop = true;
	if (!r->dist)
		stop_all(r);
}

struct load_args {
	char scenario[MB_PATH_MAX];
	char target[MB_TEXT_MAX];
	const char *topology, *ack_log, *user_range, *target_opts, *submit;
	int users, threads, stats_fd, seed, compression;
	double accel, duration, ramp, warmup;
	bool mpi;
	int tls; /* index into mb_tls_modes */
	char tls_ca[256];
	bool tls_insecure;
};

/* "A-B" into *first, *last (0 <= A <= B). */
static int parse_range(const char *s, long *first, long *last)
{
	char *end;
	*first = strtol(s, &end, 10);
	if (end == s || *end != '-' || *first < 0)
		return MB_EINVAL;
	const char *b = end + 1;
	*last = strtol(b, &end, 10);
	return end == b || *end || *last < *first ? MB_EINVAL : 0;
}

/* Checks that start nothing: the syntax of --target and --user-range. */
static int load_check(void *args)
{
	const struct load_args *a = args;
	struct mb_target_cfg probe;
	mb_target_cfg_default(&probe);
	if (a->target[0] && mb_target_cfg_parse(&probe, a->target) != 0) {
		fprintf(stderr,
			"mailbench load: --target: '%s' must be DRIVER, DRIVER:ADDR:PORT or "
			"ADDR:PORT\n",
			a->target);
		return MB_EXIT_USAGE;
	}
	long f, l;
	if (a->user_range && parse_range(a->user_range, &f, &l) != 0) {
		fprintf(
		    stderr,
		    "mailbench load: --user-range: '%s' must be FIRST-LAST, 0 <= FIRST <= LAST\n",
		    a->user_range);
		return MB_EXIT_USAGE;
	}
	return 0;
}

static int load_main(void *args, int argc, char **argv)
{
	const struct load_args *a = args;
	const char *scenario = a->scenario, *target = a->target[0] ? a->target : NULL;
	const char *topo_path = a->topology;
	const char *ack_path = a->ack_log, *range = a->user_range;
	long users = a->users > 0 ? a->users : -1, threads = a->threads, stats_fd = a->stats_fd;
	long seed = a->seed;
	double accel = a->accel > 0 ? a->accel : -1, duration = a->duration, ramp = a->ramp;
	double warmup = a->warmup;
	int compression = a->compression;
	bool mpi = a->mpi;
	(void)argc;
	(void)argv;
	/* driver options: "K=V,K=V" */
	char optbuf[MB_TARGET_OPTS_MAX * 300];
	const char *topts[MB_TARGET_OPTS_MAX];
	int ntopts = 0;
	if (a->target_opts) {
		snprintf(optbuf, sizeof(optbuf), "%s", a->target_opts);
		char *save = NULL;
		for (char *t = strtok_r(optbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (ntopts == MB_TARGET_OPTS_MAX || !strchr(t, '=')) {
				fprintf(stderr,
					"mailbench load: --target-opt: '%s' must be "
					"KEY=VALUE[,KEY=VALUE...] "
					"(at most %d)\n",
					a->target_opts, MB_TARGET_OPTS_MAX);
				return MB_EXIT_USAGE;
			}
			topts[ntopts++] = t;
		}
	}
	long rfirst = 0, rlast = -1;
	if (range)
		parse_range(range, &rfirst, &rlast); /* checked by load_check */
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
		fprintf(stderr, "mailbench load: --topology: %s\n",
			terr[0] ? terr : mb_strerror(rc));
		return MB_EXIT_USAGE;
	}
#ifdef __GLIBC__
	/* the parsed JSON is freed, but glibc keeps the pages (30 MB for
	 * 50,000 accounts): give them back before the users are counted */
	malloc_trim(0);
#endif
	/* the target: the scenario's, then --target and --target-opt */
	static struct mb_target_cfg tc;
	mb_target_cfg_default(&tc);
	if (sc.target_driver[0])
		snprintf(tc.driver, sizeof(tc.driver), "%s", sc.target_driver);
	snprintf(tc.address[0], sizeof(tc.address[0]), "%s", sc.target_address);
	snprintf(tc.address[1], sizeof(tc.address[1]), "%s", sc.target_submission);
	snprintf(tc.user, sizeof(tc.user), "%s", sc.target_user);
	snprintf(tc.password, sizeof(tc.password), "%s", sc.target_password);
	if (target && mb_target_cfg_parse(&tc, target) != 0) {
		fprintf(stderr,
			"mailbench load: bad --target '%s': expected DRIVER, DRIVER:ADDR:PORT or "
			"ADDR:PORT\n",
			target);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	/* --submit: the submission address (connection 1), smtp[s]://HOST:PORT or HOST:PORT */
	if (a->submit && mb_target_cfg_submit(&tc, a->submit) != 0) {
		fprintf(stderr,
			"mailbench load: bad --submit '%s': expected smtp://HOST:PORT, "
			"smtps://HOST:PORT or HOST:PORT\n",
			a->submit);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	if (mb_target_cfg_tls(&tc, a->tls) != 0) {
		fprintf(stderr, "mailbench load: --tls %s: the %s driver does not speak TLS\n",
			mb_tls_modes[a->tls], tc.driver);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	snprintf(tc.tls_ca, sizeof(tc.tls_ca), "%s", a->tls_ca);
	tc.tls_insecure = a->tls_insecure;
	bool uses_tls = false;
	for (int i = 0; i < MB_TARGET_CONNS_MAX; i++)
		uses_tls |= tc.tls[i] != MB_TLS_NONE && tc.address[i][0];
	if (uses_tls) { /* a CA file that does not load is bad input */
		struct mb_tls_ctx *probe_ctx;
		char tlserr[400];
		if (mb_tls_ctx_client(tc.tls_ca, tc.tls_insecure, &probe_ctx, tlserr,
				      sizeof(tlserr))) {
			fprintf(stderr, "mailbench load: --tls-ca: %s\n", tlserr);
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
		mb_tls_ctx_destroy(probe_ctx);
		if (tc.tls_insecure)
			fprintf(stderr, "mailbench load: TLS without certificate verification "
					"(--tls-insecure)\n");
	}
	const struct mb_target_ops *ops = mb_target_find(tc.driver);
	if (!ops) {
		fprintf(stderr, "mailbench load: %s: target.driver: unknown driver '%s'\n",
			scenario, tc.driver);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	for (int i = 0; i < ntopts; i++) {
		const char *eq = strchr(topts[i], '=');
		size_t kl = (size_t)(eq - topts[i]);
		bool known = false;
		for (int k = 0; ops->opts && ops->opts[k].name; k++)
			known |= strlen(ops->opts[k].name) == kl &&
				 !strncmp(ops->opts[k].name, topts[i], kl);
		if (!known || kl >= sizeof(tc.opts[0].key) ||
		    strlen(eq + 1) >= sizeof(tc.opts[0].value)) {
			fprintf(stderr,
				"mailbench load: --target-opt '%s': not an option of driver %s\n",
				topts[i], ops->name);
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
		memcpy(tc.opts[tc.nopts].key, topts[i], kl);
		snprintf(tc.opts[tc.nopts].value, sizeof(tc.opts[0].value), "%s", eq + 1);
		tc.nopts++;
	}
	for (int i = 0; !(ops->flags & MB_TARGET_F_NO_IO) && i < ops->conns; i++) {
		char num[300];
		if (!tc.address[i][0]) {
			fprintf(stderr,
				"mailbench load: the %s target needs %s (--target %s:ADDR:PORT)\n",
				ops->name,
				i == 0 ? "an address" : "target.submission in the scenario",
				ops->name);
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
		if (resolve_address(tc.address[i], num, sizeof(num)) != 0 ||
		    strlen(num) >= sizeof(tc.address[i])) {
			fprintf(stderr,
				"mailbench load: bad target address '%s': expected ADDR:PORT\n",
				tc.address[i]);
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
		snprintf(tc.address[i], sizeof(tc.address[i]), "%s", num);
	}
	int tusers = mb_topology_user_count(topo);
	if (users > tusers) {
		fprintf(stderr, "mailbench load: --users %ld: the topology %s has only %d users\n",
			users, topo_path, tusers);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	if (users < 0)
		users = sc.run_users < tusers ? sc.run_users : tusers;
	if (range && rlast >= users) {
		fprintf(
		    stderr,
		    "mailbench load: --user-range %s: beyond the %ld simulated users (--users)\n",
		    range, users);
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	if (!range)
		rlast = users - 1;
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

	struct run r;
	memset(&r, 0, sizeof(r));
	int ack_fd = -1;
	if (mpi) {
		/* the ranks split the user range (all N users by default) */
		if ((rc = mb_distload_join((int)rfirst, (int)rlast, &r.dist)) != 0) {
			mb_topology_destroy(topo);
			return rc == MB_EUNSUPPORTED || rc == MB_ERANGE ? MB_EXIT_USAGE
									: MB_EXIT_RUNTIME;
		}
		if (mb_distload_ack_open(r.dist, ack_path, &ack_fd) != 0) {
			mb_distload_end(r.dist, MB_EXIT_USAGE);
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
		ack_path = NULL; /* the rank's spool, not the file */
		if (mb_distload_rank(r.dist) != 0)
			stats_fd = -1; /* rank 0 writes the job's stream */
	}
	if (ack_path) {
		ack_fd = open(ack_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (ack_fd < 0) {
			fprintf(stderr, "mailbench load: --ack-log %s: %s\n", ack_path,
				strerror(errno));
			mb_topology_destroy(topo);
			return MB_EXIT_USAGE;
		}
	}
	r.sc = &sc;
	r.users = (int)users;
	r.first = (int)rfirst;
	r.count = (int)(rlast - rfirst + 1);
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
	    .sc = &sc,
	    .topo = topo,
	    .target = &tc,
	    .users = (int)users,
	    .first = r.first,
	    .count = r.count,
	    .accel = accel,
	    .ramp_s = ramp,
	    .threads = (int)threads,
	    .seed = (uint64_t)seed,
	    .ack_fd = ack_fd,
	    .compression = compression != 0,
	    .notify = true,
	};
	if (r.dist) { /* this rank's slice of the range */
		eo.first = mb_distload_slice(r.dist)->first;
		eo.count = mb_distload_slice(r.dist)->users;
	}
	/* each user holds its connections open: past the open-file limit the
	 * users go to several processes (mailbench run does it through mpirun) */
	int conns = ops->flags & MB_TARGET_F_NO_IO ? 0 : ops->conns;
	long fdlim = mb_dist_fd_limit();
	if (mb_dist_users_per_proc(fdlim, conns) < eo.count) {
		int k = 0;
		mb_dist_procs_for_fds(eo.count, conns, fdlim, &k);
		fprintf(
		    stderr,
		    "mailbench load: --users: %d users x %d connection%s need %ld open files with "
		    "the process's own %d, above the open-file limit %ld (ulimit -Hn): split them "
		    "over "
		    "%d or more load processes (mailbench run does, through mpirun; or mpirun -n "
		    "%d "
		    "mailbench load --mpi ...)\n",
		    eo.count, conns, conns == 1 ? "" : "s",
		    (long)eo.count * conns + MB_DIST_FD_RESERVE, MB_DIST_FD_RESERVE, fdlim,
		    k > 1 ? k : 2, k > 1 ? k : 2);
		exit_code = MB_EXIT_USAGE;
		goto out;
	}
	if ((rc = mb_load_stats_create(&r.total)) != 0 ||
	    (rc = mb_load_stats_create(&r.win)) != 0 || (rc = mb_engine_create(&eo, &r.eng)) != 0) {
		fprintf(stderr, "mailbench load: cannot set up the engine: %s\n", mb_strerror(rc));
		exit_code = MB_EXIT_RUNTIME;
		goto out;
	}
	uv_loop_t *loop = uv_default_loop();
	uv_timer_init(loop, &r.tick);
	uv_timer_init(loop, &r.end);
	uv_signal_init(loop, &r.sigint);
	uv_signal_init(loop, &r.sigterm);
	uv_signal_init(loop, &r.sigusr1);
	r.tick.data = r.end.data = r.sigint.data = r.sigterm.data = r.sigusr1.data = &r;
	if ((rc = mb_engine_start(r.eng)) != 0) {
		fprintf(stderr, "mailbench load: cannot start: %s\n", mb_strerror(rc));
		exit_code = MB_EXIT_RUNTIME;
		stop_all(&r);
		close_signals(&r, loop);
		uv_loop_close(loop);
		goto out;
	}
	/* --mpi: the windows start together (each later one waits for all) */
	if (r.dist && mb_distload_barrier(r.dist) != 0) {
		fprintf(stderr, "mailbench load: rank %d: the job did not start\n",
			mb_distload_rank(r.dist));
		mb_distload_end(r.dist, MB_EXIT_RUNTIME);
	}
	r.t0 = r.t_last = mb_now_s();
	if (r.warm)
		r.have_ps_warm = mb_proc_sample(0, &r.ps_warm) == 0;
	uv_timer_start(&r.tick, tick_cb, 1000, 1000);
	if (duration > 0)
		uv_timer_start(&r.end, end_cb, (uint64_t)(duration * 1000), 0);
	uv_signal_start(&r.sigint, signal_cb, SIGINT);
	uv_signal_start(&r.sigterm, signal_cb, SIGTERM);
	uv_signal_start(&r.sigusr1, signal_cb, SIGUSR1);
	uv_unref((uv_handle_t *)&r.sigint);
	uv_unref((uv_handle_t *)&r.sigterm);
	uv_unref((uv_handle_t *)&r.sigusr1);
	uv_run(loop, UV_RUN_DEFAULT);
	mb_engine_stop(r.eng);
	mb__load_sample(&r, true);
	if (r.w)
		mb_stats_write_end(r.w);
	else if (!r.dist || mb_distload_rank(r.dist) == 0)
		mb__load_print_summary(&r);
	if (r.logons_all == 0 && (!r.dist || mb_distload_rank(r.dist) == 0)) {
		/* nothing was measured: a runtime failure, not a result */
		fprintf(stderr,
			"mailbench load: no user could log on to %s%s%s (%llu connect failures, "
			"%llu logon failures)\n",
			tc.driver, tc.address[0][0] ? ":" : "", tc.address[0],
			(unsigned long long)r.total->n.connect_failures,
			(unsigned long long)r.total->n.logon_failures);
		exit_code = MB_EXIT_RUNTIME;
	}
	const char *tls_err = mb_engine_tls_error(r.eng);
	if (tls_err && (!r.dist || mb_distload_rank(r.dist) == 0))
		fprintf(stderr, "mailbench load: TLS failure (the first): %s\n", tls_err);
	close_signals(&r, loop);
	uv_loop_close(loop);
out:
	mb_engine_destroy(r.eng);
	json_decref(r.ds.ranks);
	free(r.ds.acks);
	/* --mpi: a rank that failed aborts the job (mpirun names it) */
	mb_distload_end(r.dist, exit_code);
	bool dist = r.dist != NULL;
	r.dist = NULL;
	mb_load_stats_destroy(r.total);
	mb_load_stats_destroy(r.win);
	mb_stats_writer_destroy(r.w);
	mb_topology_destroy(topo);
	if (ack_fd >= 0 && !dist) /* --mpi: the spool, closed by the job */
		close(ack_fd);
	return exit_code;
}

#define LA struct load_args
static const struct mb_opt load_opts[] = {
    MB_OPTION_SCENARIO(LA, scenario, NULL, MB_OPT_REQ, NULL),
    MB_OPTION_TARGET(LA, target, 't', "the scenario's target.driver and target.address"),
    {.path = "target-opt",
     .flag = "target-opt",
     .sflag = 'o',
     .metavar = "K=V,...",
     .type = MB_OT_ARG,
     .off = offsetof(LA, target_opts),
     .flags = MB_OPT_NONEMPTY,
     .help = "options of the driver (null: fail_logons, lose_every, spin_us)"},
    {.path = "submit",
     .flag = "submit",
     .sflag = 'M',
     .metavar = "ADDR",
     .type = MB_OT_ARG,
     .off = offsetof(LA, submit),
     .flags = MB_OPT_NONEMPTY,
     .dtext = "the scenario's target.submission",
     .help = "the submission address (smtp://HOST:PORT, smtps://HOST:PORT: TLS) of the imap "
	     "target"},
    MB_OPTION_TLS(LA, tls),
    MB_OPTION_TLS_CA(LA, tls_ca),
    MB_OPTION_TLS_INSECURE(LA, tls_insecure),
    {.path = "topology",
     .flag = "topology",
     .sflag = 'T',
     .metavar = "FILE",
     .type = MB_OT_ARG,
     .off = offsetof(LA, topology),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help =
	 "DATA/topology.json written by mailbench init, or an accounts file (DATA/accounts.json)"},
    MB_OPTION_USERS(LA, users, "the scenario's run.users, at most the topology's; the first N"),
    {.path = "user-range",
     .flag = "user-range",
     .sflag = 'R',
     .metavar = "A-B",
     .type = MB_OT_ARG,
     .off = offsetof(LA, user_range),
     .flags = MB_OPT_NONEMPTY,
     .dtext = "all N",
     .help = "run only users A..B (0-based) of the N simulated; recipients are drawn among all N"},
    MB_OPTION_ACCEL(LA, accel, 'a'),
    {.path = "duration",
     .flag = "duration",
     .sflag = 'd',
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(LA, duration),
     .def = -1,
     .min = 0,
     .max = MB_DURATION_MAX,
     .dtext = "the scenario's run.duration_s",
     .help = "stop after S seconds (0: until a signal)"},
    {.path = "ramp",
     .flag = "ramp",
     .sflag = 'r',
     .metavar = "S",
     .type = MB_OT_DOUBLE,
     .off = offsetof(LA, ramp),
     .def = -1,
     .min = 0,
     .max = MB_RAMP_MAX,
     .dtext = "the scenario's run.ramp_s",
     .help = "spread logons over S seconds"},
    {.path = "threads",
     .flag = "threads",
     .sflag = 'j',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(LA, threads),
     .def = -1,
     .min = 1,
     .max = 1024,
     .dtext = "online CPUs",
     .help = "event loops (threads), users sharded over them"},
    MB_OPTION_STATS_FD(LA, stats_fd, 'f'),
    MB_OPTION_ACK_LOG(LA, ack_log, 'A',
		      "append '+ MAILBOX MID' for every acknowledged create, '- MAILBOX MID' for "
		      "every acknowledged delete ('~ MAILBOX MID' when a delete was asked, before "
		      "its reply); with --mpi, '-' sends them in the stats stream (x.acks)"),
    MB_OPTION_SEED(LA, seed, 'S', 1, 0, "1"),
    MB_OPTION_COMPRESSION(LA, compression, 'c', -1, "the scenario's run.compression"),
    MB_OPTION_WARMUP(LA, warmup, 'w', 0,
		     "0; the end summary leaves them out, the stats stream has every second"),
    {.path = "mpi",
     .flag = "mpi",
     .type = MB_OT_FLAG,
     .off = offsetof(LA, mpi),
     .help = "one rank of an Open MPI job (mpirun -n K [--hostfile H] mailbench load --mpi ...): "
	     "rank r runs the r-th contiguous slice of the users (of --user-range), balanced by "
	     "count; once a second the ranks reduce their counters and histogram buckets to rank 0 "
	     "(exact sums), which alone writes the stats stream, the summary and the ack log; "
	     "SIGUSR1 (mpirun forwards it) stops every rank at the same window"},
};

const struct mb_cmd_entry mb_cmd_load_entry = {
    .name = "load",
    .usage = "-s SCENARIO [--target [DRIVER:]ADDR:PORT] --topology FILE [OPTIONS]",
    .summary = "the load engine: simulated Outlook users",
    .about = "Simulated Outlook users (online or cached mode, per the scenario) drive a\n"
	     "target through its driver (mbstore: a mailbench store over its wire protocol;\n"
	     "null: no I/O; imap: a real mail server over IMAP + SMTP submission),\n"
	     "following the scenario's 8-hour day.  Without --stats-fd it\n"
	     "prints a summary at the end: per action scheduled, done, failed, late, cut and\n"
	     "p50/p95/p99 (\"not supported by the target\" for what the target cannot run),\n"
	     "the LoadSim score, messages sent and received per user-day.",
    .epilog = "exit codes: 0 ok, 2 usage or input error, 3 runtime failure (also when no user\n"
	      "could log on: the target is named)",
    .opts = load_opts,
    .nopts = (int)(sizeof(load_opts) / sizeof(load_opts[0])),
    .args_size = sizeof(struct load_args),
    .check = load_check,
    .run = load_main,
};
