/* session_children.c: the session's children and their command lines:
 * `mailbench init`, `store`, `load` (one process, or an Open MPI job of
 * ranks) and `storage-test`, each built from the child command's own
 * option table (mb_argv_*: a flag is looked up and its value checked
 * before the spawn), and what the fault injector asks of the store (kill,
 * control lines).  Invariants: a child is spawned only through mb__spawn,
 * which records its role; a start that fails leaves the run failed and
 * finished (mb__finish_load) or stopping, never half started; the data
 * directory is restored to its pristine state before the store starts,
 * never when the store is restarted mid-run after an injected kill. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/error.h"
#include "core/options.h"
#include "load/dist.h"
#include "report/session_int.h"
#include "core/tls.h"
#include "report/runopts.h"

/* ---- the run's children ---- */

/* The host part of the store's listen address (what the load connects to). */
static void listen_host(const struct mb_session *s, char *buf, size_t len)
{
	const char *l = s->p.listen[0] ? s->p.listen : "127.0.0.1:0";
	const char *colon = strrchr(l, ':');
	size_t n = colon ? (size_t)(colon - l) : strlen(l);
	if (n >= len)
		n = len - 1;
	memcpy(buf, l, n);
	buf[n] = '\0';
}

static int spawn_ex(struct mb_session *s, enum child_role role, const char *name,
		    const char *const *args, const struct mb_spawn_opts *o, struct mb_child **out)
{
	int rc = mb_sup_spawn_ex(s->sup, name, args, o, out);
	if (rc) {
		mb__emit_msg(s, "cannot start %s: %s", name, mb_strerror(rc));
		return rc;
	}
	mb_child_set_data(*out, (void *)(intptr_t)role);
	return 0;
}

int mb__spawn(struct mb_session *s, enum child_role role, const char *name, const char *const *args,
	      struct mb_child **out)
{
	return spawn_ex(s, role, name, args, NULL, out);
}

/* how long after the load engine's own end the session stops it anyway */
#define DURATION_BACKSTOP_MS 10000

/* The load could not start: the run fails, the store (if any) is stopped
 * and the run finishes when it has gone. */
static void load_not_started(struct mb_session *s)
{
	s->failed = true;
	if (s->store) {
		s->state = MB_SS_STOPPING;
		mb_child_stop(s->store, MB_SUP_GRACE_MS);
	} else {
		mb__finish_load(s);
	}
	mb__emit_change(s);
}

void mb__start_load_engine(struct mb_session *s)
{
	char target[MB_TEXT_MAX + 200], topo[MB_PATH_MAX + 32];
	char lhost[128];
	listen_host(s, lhost, sizeof(lhost)); /* the embedded store's address */
	if (s->embedded)
		snprintf(target, sizeof(target), "%s:%s:%d", s->tcfg.driver, lhost,
			 mb_child_port(s->store));
	else if (s->tcfg.address[0][0])
		snprintf(target, sizeof(target), "%s:%s", s->tcfg.driver, s->tcfg.address[0]);
	else
		snprintf(target, sizeof(target), "%s", s->tcfg.driver);
	mb__accounts_path(s, topo, sizeof(topo));
	/* the flags and their checks come from the load command's table */
	struct mb_argv av;
	mb_argv_init(&av, &mb_cmd_load_entry);
	if (s->mpi)
		mb_argv_add(&av, "mpi", "");
	if (s->mpi && !s->p.load_hosts[0]) { /* local ranks share the cores */
		int ncpu = 1;
		mb_online_cpus(&ncpu);
		mb_argv_addf(&av, "threads", "%d",
			     ncpu > s->ranks.ranks ? ncpu / s->ranks.ranks : 1);
	}
	mb_argv_add(&av, "scenario", s->sc.path[0] ? s->sc.path : s->p.scenario);
	if (s->tcfg.tls[0] == MB_TLS_IMPLICIT)
		mb_runopts_url(&s->tcfg, 0, target, sizeof(target));
	mb_argv_add(&av, "target", target);
	char sub[MB_TEXT_MAX + 16];
	mb_runopts_url(&s->tcfg, 1, sub, sizeof(sub));
	if (s->tcfg.address[1][0])
		mb_argv_add(&av, "submit", sub);
	mb_runopts_tls_argv(&s->tcfg, &av);
	if (s->tcfg.tls_insecure)
		mb__emit_msg(s, "TLS without certificate verification (--tls-insecure)");
	mb_argv_add(&av, "topology", topo);
	mb_argv_addf(&av, "users", "%d", mb_session_users(s));
	mb_argv_addf(&av, "accel", "%.10g", mb_session_accel(s));
	mb_argv_add(&av, "compression", mb_session_compression(s) ? "on" : "off");
	mb_argv_addf(&av, "seed", "%ld", mb_session_seed(s));
	/* a run of a set duration: the load engine stops itself after it,
	 * counted from its own start, so that two runs with one seed schedule
	 * the same actions (the session's timer is a backstop); otherwise the
	 * session stops it (operator) */
	if (s->p.duration_s > 0)
		mb_argv_addf(&av, "duration", "%.10g", s->p.duration_s);
	else
		mb_argv_add(&av, "duration", "0");
	if (s->p.warmup_s >= 0 && s->p.warmup_s < s->sc.ramp_s)
		/* logons ramp up within the warm-up, so averages exclude them */
		mb_argv_addf(&av, "ramp", "%.10g", s->p.warmup_s);
	/* the acknowledgements: --ack-log, else a file of ours, checked against
	 * the data after a run with a fault (outside the data directory, whose
	 * file system a fault may fill) */
	s->ack_is_tmp = !s->p.ack_log[0];
	if (s->ack_is_tmp) {
		const char *tmp = getenv("TMPDIR");
		snprintf(s->ack_log, sizeof(s->ack_log), "%s/mailbench-ack-%d.log",
			 tmp && tmp[0] ? tmp : "/tmp", (int)getpid());
		unlink(s->ack_log);
	} else {
		snprintf(s->ack_log, sizeof(s->ack_log), "%s", s->p.ack_log);
	}
	{
		/* a job's rank 0 may run on another host: its lines come in the
		 * stats stream and this process writes the file */
		mb_argv_add(&av, "ack-log", s->mpi ? "-" : s->ack_log);
		if (s->mpi && s->ack_fd < 0)
			s->ack_fd =
			    open(s->ack_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (s->mpi && s->ack_fd < 0) {
			mb__emit_msg(s, "--ack-log %s: %s", s->ack_log, strerror(errno));
			mb_argv_done(&av);
			load_not_started(s);
			return;
		}
	}
	/* rank 0's stdout is a job's stats stream (mpirun forwards no other
	 * descriptor) */
	mb_argv_add(&av, "stats-fd", s->mpi ? "1" : MB_SUP_STATS_FD_STR);
	const char *const *args = mb_argv_done(&av);
	if (!args)
		mb__emit_msg(s, "cannot start load: %s", av.why);
	/* a job: mpirun starts the ranks on the load hosts; SIGUSR1, which it
	 * forwards to every rank, stops the job at one window */
	const char *margs[MB_ARGV_MAX + 16];
	char nprocs[32];
	struct mb_spawn_opts so = {0};
	if (args && s->mpi) {
		int n = 0;
		snprintf(nprocs, sizeof(nprocs), "%d", s->ranks.ranks);
		so.program = mb_mpirun_program();
		so.stats_on_stdout = true;
		so.stop_signal = SIGUSR1;
		if (s->p.load_hosts[0]) {
			margs[n++] = "--hostfile";
			margs[n++] = s->p.load_hosts;
		}
		margs[n++] = "-n";
		margs[n++] = nprocs;
		margs[n++] = "--oversubscribe";
		if (geteuid() == 0)
			margs[n++] = "--allow-run-as-root";
		margs[n++] = mb_sup_program(s->sup);
		for (int i = 0; args[i] && n < MB_ARGV_MAX + 15; i++)
			margs[n++] = args[i];
		margs[n] = NULL;
		args = margs;
	}
	s->dead_rank = -1;
	if (!args || spawn_ex(s, ROLE_LOAD, "load", args, s->mpi ? &so : NULL, &s->load)) {
		load_not_started(s);
		return;
	}
	s->state = MB_SS_RUNNING;
	s->load_t0 = mb_now_s();
	mb_faults_start(s->faults, s->load_t0);
	/* the duration counts from the load's start, not the initialisation */
	if (s->p.duration_s > 0)
		uv_timer_start(&s->duration_timer, mb__on_duration,
			       (uint64_t)(s->p.duration_s * 1000.0) + DURATION_BACKSTOP_MS, 0);
	if (s->mpi)
		mb__emit_msg(s, "load started: %d users, accel %g, target %s, %s",
			     mb_session_users(s), mb_session_accel(s), target, s->load_desc);
	else if (s->store)
		mb__emit_msg(s, "load started: %d users, accel %g, store on port %d",
			     mb_session_users(s), mb_session_accel(s), mb_child_port(s->store));
	else
		mb__emit_msg(s, "load started: %d users, accel %g, target %s", mb_session_users(s),
			     mb_session_accel(s), s->target_str);
	mb__emit_change(s);
}

/* Every run starts from the pristine initialised state unless told to
 * reuse the directory as it is (store/pristine.h); 0, or the run failed. */
static int prepare_data(struct mb_session *s)
{
	char perr[1024] = "";
	int prc = s->p.reuse
		      ? mb_pristine_measure(s->p.data_dir, &s->data_info, perr, sizeof(perr))
		      : mb_pristine_prepare(s->p.data_dir, &s->data_info, perr, sizeof(perr));
	if (prc) {
		s->failed = true;
		mb__emit_msg(s, "cannot prepare %s: %s", s->p.data_dir,
			     perr[0] ? perr : mb_strerror(prc));
		mb__finish_load(s);
		return prc;
	}
	s->has_data_info = true;
	const struct mb_pristine_info *di = &s->data_info;
	if (s->p.reuse)
		mb__emit_msg(s, "reusing %s as it is (%.1f MB, state %s)", s->p.data_dir,
			     (double)di->bytes_data / 1048576.0, di->fingerprint);
	else
		mb__emit_msg(
		    s, "%s %s (%.1f MB, state %s; %d files linked, %d reflinked, %d copied)",
		    di->saved ? "pristine copy saved of" : "restored the pristine state of",
		    s->p.data_dir, (double)di->bytes_data / 1048576.0, di->fingerprint, di->links,
		    di->reflinks, di->copies);
	return 0;
}

void mb__start_store(struct mb_session *s)
{
	bool restart = s->state == MB_SS_RUNNING; /* after an injected kill */
	/* a store restarted mid-run recovers the data it had: restoring the
	 * pristine state then would discard acknowledged writes */
	if (!restart && prepare_data(s))
		return;
	struct mb_argv av;
	char listen[320];
	if (!restart) {
		snprintf(listen, sizeof(listen), "%s",
			 s->p.listen[0] ? s->p.listen : "127.0.0.1:0");
	} else { /* the host it had, and the port it had */
		const char *c = s->p.listen[0] ? strrchr(s->p.listen, ':') : NULL;
		snprintf(listen, sizeof(listen), "%.*s:%d", c ? (int)(c - s->p.listen) : 9,
			 c ? s->p.listen : "127.0.0.1", s->store_port);
	}
	mb_argv_init(&av, &mb_cmd_store_entry);
	mb_argv_add(&av, "data", s->p.data_dir);
	mb_argv_add(&av, "listen", listen);
	/* the log directory is recorded in the topology by init */
	mb_argv_add(&av, "compression", mb_session_compression(s) ? "on" : "off");
	/* the scenario's threshold: the store tells each client at logon */
	mb_argv_addf(&av, "compress-min", "%d", s->sc.compression_min_bytes);
	mb_argv_addf(&av, "cache-mb", "%.10g", mb_session_cache_mb(s));
	/* the engine the comparison's header names: the scenario's writes */
	mb_argv_addf(&av, "write-max-kb", "%d", s->sc.write_max_kb);
	mb_argv_add(&av, "stats-fd", MB_SUP_STATS_FD_STR);
	const char *const *args = mb_argv_done(&av);
	if (!args)
		mb__emit_msg(s, "cannot start store: %s", av.why);
	if (!args || mb__spawn(s, ROLE_STORE, "store", args, &s->store)) {
		s->failed = true;
		if (restart) {
			s->state = MB_SS_STOPPING;
			mb_child_stop(s->load, MB_SUP_GRACE_MS);
			return;
		}
		mb__finish_load(s);
		return;
	}
	if (restart) {
		mb__emit_msg(s, "store restarted after an injected kill (port %d)", s->store_port);
		return;
	}
	s->state = MB_SS_STARTING;
	mb__emit_msg(s, "store starting");
	uv_timer_start(&s->listen_timer, mb__on_listen_timeout, LISTEN_TIMEOUT_MS, 0);
	mb__emit_change(s);
}

/* Start the init child with the arguments av holds (the embedded store's
 * init or the provisioning over IMAP): 0 and the INIT state, or MB_ECHILD with the
 * load finished as failed. */
int mb__spawn_init(struct mb_session *s, struct mb_argv *av)
{
	const char *const *args = mb_argv_done(av);
	if (!args)
		mb__emit_msg(s, "cannot start init: %s", av->why);
	if (!args || mb__spawn(s, ROLE_INIT, "init", args, &s->init)) {
		s->failed = true;
		mb__finish_load(s);
		return MB_ECHILD;
	}
	s->state = MB_SS_INIT;
	s->init_pct = 0;
	s->init_t0 = mb_now_s();
	return 0;
}

void mb__start_init(struct mb_session *s)
{
	struct mb_argv av;
	mb_argv_init(&av, &mb_cmd_init_entry);
	mb_argv_add(&av, "scenario", s->sc.path[0] ? s->sc.path : s->p.scenario);
	mb_argv_add(&av, "data", s->p.data_dir);
	mb_argv_addf(&av, "users", "%d", mb_session_users(s));
	mb_argv_addf(&av, "scale", "%.10g", mb_session_scale(s));
	/* a new initialisation takes the run's seed for the content: one
	 * seed, one starting state; a resumed one keeps the seed it began
	 * with (init.state) */
	char st[MB_PATH_MAX + 16];
	snprintf(st, sizeof(st), "%s/init.state", s->p.data_dir);
	if (s->init_restart || access(st, F_OK) != 0)
		mb_argv_addf(&av, "seed", "%ld", mb_session_seed(s));
	if (s->init_restart) {
		/* asked by the operator: replace an initialisation made with
		 * other parameters */
		mb_argv_add(&av, "restart", NULL);
		s->init_restart = false;
	}
	if (s->p.log_dir[0])
		mb_argv_add(&av, "log-dir", s->p.log_dir);
	if (mb__spawn_init(s, &av))
		return;
	mb__emit_msg(s, "initialising %s (%d users, scale %g)", s->p.data_dir, mb_session_users(s),
		     mb_session_scale(s));
	mb__emit_change(s);
}

/* ---- the storage test ---- */

int mb_session_start_stress(struct mb_session *s, int threads)
{
	if (!s->configured)
		return MB_ESTATE;
	if (s->stress)
		return MB_EBUSY;
	if (threads > 0)
		s->stress_threads = threads;
	if (mkdir(s->p.data_dir, 0700) && errno != EEXIST)
		return mb_from_errno(errno);
	char json[MB_PATH_MAX + 32];
	snprintf(json, sizeof(json), "%s/stress-last.json", s->p.data_dir);
	struct mb_argv av;
	mb_argv_init(&av, &mb_cmd_storage_test_entry);
	mb_argv_add(&av, "data", s->p.data_dir);
	if (s->p.log_dir[0])
		mb_argv_add(&av, "log-dir", s->p.log_dir);
	if (s->stress_kind == MB_STRESS_AUTO)
		mb_argv_add(&av, "threads", "auto");
	else
		mb_argv_addf(&av, "threads", "%d", s->stress_threads);
	if (s->stress_kind == MB_STRESS_SOFT_RECOVERY || s->stress_kind == MB_STRESS_CHECKSUM)
		mb_argv_add(&av, "type",
			    s->stress_kind == MB_STRESS_CHECKSUM ? "checksum" : "soft-recovery");
	if (s->p.stress_size_gb > 0)
		mb_argv_addf(&av, "size", "%.10g", s->p.stress_size_gb);
	/* 0: until stopped; auto-tune needs a measured window per count (the
	 * storage settings') */
	double dur = s->p.stress_duration_s > 0 ? s->p.stress_duration_s : 0;
	if (s->stress_kind == MB_STRESS_AUTO && !(dur > 0))
		dur = s->have_st && s->st.duration_s > 0 ? s->st.duration_s : 30;
	mb_argv_addf(&av, "duration", "%.10g", dur);
	/* the storage counters' thresholds, as the console has them */
	char rth[48], lth[48];
	mb_threshold_format(&s->th.counter[MB_C_STRESS_READ_MS], rth, sizeof(rth));
	mb_threshold_format(&s->th.counter[MB_C_STRESS_LOG_MS], lth, sizeof(lth));
	mb_argv_add(&av, "read-ms-max", rth[0] ? rth : "none");
	mb_argv_add(&av, "log-ms-max", lth[0] ? lth : "none");
	mb_argv_add(&av, "json", json);
	mb_argv_add(&av, "stats-fd", MB_SUP_STATS_FD_STR);
	const char *const *args = mb_argv_done(&av);
	if (!args) {
		mb__emit_msg(s, "cannot start the storage test: %s", av.why);
		return MB_EINVAL;
	}
	mb_histset_reset(s->stress_hists);
	memset(&s->lat[MB_SRC_STRESS], 0, sizeof(s->lat[MB_SRC_STRESS]));
	if (!mb_session_load_active(s)) {
		/* sampling starts with the storage test */
		mb_series_reset(s->series);
		s->t0 = mb_now_s();
		s->series_on = true;
	}
	s->stress_t0 = mb_now_s();
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		if (mb_counters[i].source == MB_SRC_STRESS ||
		    (mb_counters[i].source == MB_SRC_HOST && !mb_session_load_active(s)))
			s->wsum[i] = s->wdt[i] = 0;
	}
	int rc = mb__spawn(s, ROLE_STRESS, "storage-test", args, &s->stress);
	if (rc) {
		if (!mb_session_load_active(s))
			s->series_on = false;
		return rc;
	}
	mb__emit_msg(s, "storage test started: %d threads", s->stress_threads);
	mb__emit_change(s);
	return 0;
}

int mb_session_stop_stress(struct mb_session *s)
{
	if (!s->stress)
		return 0;
	mb_child_stop(s->stress, MB_SUP_GRACE_MS);
	mb__emit_msg(s, "stopping the storage test");
	return 0;
}

/* ---- fault injection: what the injector asks of the session ---- */

static int fault_kill_store(void *arg, char *note, size_t len)
{
	struct mb_session *s = arg;
	if (!s->store || s->state != MB_SS_RUNNING)
		return MB_ESTATE;
	snprintf(note, len, "store killed (SIGKILL, pid %d)", (int)mb_child_pid(s->store));
	return mb_child_kill(s->store);
}

static int fault_store_control(void *arg, const char *line)
{
	struct mb_session *s = arg;
	return s->store ? mb_child_send(s->store, line) : MB_ESTATE;
}

static const char *fault_data_dir(void *arg)
{
	struct mb_session *s = arg;
	return s->p.data_dir;
}

const struct mb_fault_ops mb__fault_ops = {NULL, fault_kill_store, fault_store_control,
					   fault_data_dir};

int mb_session_add_fault(struct mb_session *s, const char *spec, char *err, size_t errlen)
{
	struct mb_fault_spec sp;
	int rc = mb_fault_parse(spec, &sp, err, errlen);
	if (!rc && (rc = mb_faults_add(s->faults, &sp)))
		snprintf(err, errlen, "'%s': at most %d faults", spec, MB_RUN_MAX_FAULTS);
	return rc;
}

int mb_session_inject_fault(struct mb_session *s, const char *spec, char *err, size_t errlen)
{
	struct mb_fault_spec sp;
	int rc = mb_fault_parse(spec, &sp, err, errlen);
	if (rc)
		return rc;
	rc = mb_faults_inject(s->faults, &sp);
	if (rc)
		snprintf(err, errlen, "%s: not injected: %s", spec,
			 rc == MB_ESTATE ? "the load is not running" : mb_strerror(rc));
	else
		mb__emit_msg(s, "fault injected: %s", sp.text);
	return rc;
}

int mb_session_fault_count(const struct mb_session *s) { return mb_faults_count(s->faults); }

int mb_session_sg_groups(const struct mb_session *s, struct mb_sg_view *out, int max)
{
	return s->faults ? mb_faults_groups(s->faults, out, max) : 0;
}

const char *mb_session_ack_log(const struct mb_session *s) { return s->ack_log; }
