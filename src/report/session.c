/* session.c: the session's pipeline: its children in order and the states
 * of a load run (session.h; the children's command lines are in
 * session_children.c, the configuration in session_config.c, the
 * measurements in session_measure.c, a real mail server in session_lab.c,
 * the summary in session_summary.c; session_int.h is their one struct).
 *
 * The states of a load run (enum mb_session_state), as the code moves them:
 *
 *   IDLE, DONE or FAILED --mb_session_start_load-->
 *     embedded store (mbstore, no address):
 *       not initialised:  INIT (init) --exit 0--> STARTING (store)
 *       initialised:                              STARTING (store)
 *       STARTING --"listening on"--> RUNNING (load)
 *     lab:dovecot:        STARTING (lab) --its URLs--> INIT (init over IMAP)
 *     imap://HOST:PORT:                                INIT (init over IMAP)
 *       INIT --exit 0--> RUNNING (load)
 *     any other target (a store or the null target elsewhere): RUNNING (load)
 *   RUNNING --the load exits (its duration), or mb_session_stop_load-->
 *     STOPPING: the load stops, then the store; a real server: the ack
 *     check (again every 2 s while a message is missing), then the lab's
 *     stop; with none of these left (another target) RUNNING goes on to
 *     DONE or FAILED at once
 *   INIT, STARTING --mb_session_stop_load--> STOPPING
 *   INIT --init fails--> FAILED
 *   STOPPING --the last child gone (mb__finish_load)--> DONE, or FAILED
 *     when a child exited unasked or a start failed
 *   any start that fails (spawn, argv, data, listen timeout) --> FAILED
 *     through STOPPING when a child must be stopped first
 *   RUNNING --the store killed by an injected fault--> RUNNING (the store
 *     restarted on its port; the load reconnects)
 *
 * The storage test (`storage-test`) starts and stops on its own, beside
 * any state.  Invariants: the state changes only here and in the start_*
 * functions; a child that exits unasked fails the run with its stderr
 * tail; a run that started its load ends with one final summary
 * (mb__conclude_run); destroying the session leaves no child behind (the
 * supervisor's, and the lab's servers it saw). */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/options.h"
#include "load/dist.h"
#include "report/session_int.h"

/* ---- events and the children's lines ---- */

void mb__emit_change(struct mb_session *s)
{
	if (s->ev.on_change)
		s->ev.on_change(s->arg, s);
}

void mb__emit_msg(struct mb_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->message, sizeof(s->message), fmt, ap);
	va_end(ap);
	if (s->ev.on_message)
		s->ev.on_message(s->arg, s, s->message);
}

enum child_role mb__role_of(struct mb_child *c)
{
	return (enum child_role)(intptr_t)mb_child_data(c);
}

static void parse_progress(struct mb_session *s, const char *line)
{
	/* the last "NN%" or "NN.N%" on the line */
	const char *pct = NULL;
	for (const char *q = strchr(line, '%'); q; q = strchr(q + 1, '%'))
		pct = q;
	if (!pct)
		return;
	const char *b = pct;
	while (b > line && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
		b--;
	if (b == pct)
		return;
	double v = strtod(b, NULL);
	if (v >= 0 && v <= 100) {
		s->init_pct = v;
		mb__emit_change(s);
	}
}

static void on_line(void *arg, struct mb_child *c, enum mb_child_stream st, const char *line)
{
	struct mb_session *s = arg;
	if (mb__role_of(c) == ROLE_INIT)
		parse_progress(s, line);
	if (mb__role_of(c) == ROLE_LAB || mb__role_of(c) == ROLE_CHECK)
		mb__lab_line(s, c, st, line);
	/* mpirun names the rank that failed first */
	if (mb__role_of(c) == ROLE_LOAD && s->mpi && st == MB_CHILD_STDERR && s->dead_rank < 0)
		if (!mb_mpirun_parse_failure(line, &s->dead_rank, s->dead_how, sizeof(s->dead_how)))
			s->dead_rank = -1;
}

static void on_listening(void *arg, struct mb_child *c, const char *addr, int port)
{
	struct mb_session *s = arg;
	(void)addr;
	if (c == s->store)
		s->store_port = port;
	if (c == s->store && s->state == MB_SS_RUNNING)
		mb_faults_store_back(s->faults, mb_now_s()); /* restarted after a kill */
	if (c != s->store || s->state != MB_SS_STARTING)
		return;
	uv_timer_stop(&s->listen_timer);
	mb__start_load_engine(s);
}

void mb__on_listen_timeout(uv_timer_t *t)
{
	struct mb_session *s = t->data;
	if (s->state != MB_SS_STARTING)
		return;
	if (s->labc) {
		s->failed = true;
		mb__emit_msg(s, "the lab did not come up within %d s", LAB_START_TIMEOUT_MS / 1000);
		s->state = MB_SS_STOPPING;
		mb_child_stop(s->labc, LAB_GRACE_MS);
		mb__emit_change(s);
		return;
	}
	s->failed = true;
	mb__emit_msg(s, "store did not report listening within %d s", LISTEN_TIMEOUT_MS / 1000);
	s->state = MB_SS_STOPPING;
	mb_child_stop(s->store, MB_SUP_GRACE_MS);
	mb__emit_change(s);
}

void mb__finish_load(struct mb_session *s)
{
	/* a real server: the ack check while it is up, then the lab's stop */
	if (s->imap && !s->check_done && s->load_t0 > 0 && !s->init && !s->load) {
		if (s->lab && !s->lab_up) {
			s->check_done = true;
			snprintf(s->check_note, sizeof(s->check_note),
				 "the lab was down at the end of the run");
		} else {
			mb__start_check(s);
			if (!s->check_done)
				return;
		}
	}
	if (s->labc) {
		s->state = MB_SS_STOPPING;
		if (!mb_child_stop_requested(s->labc)) {
			mb__emit_msg(s, "stopping the lab (Dovecot and Postfix)");
			mb_child_stop(s->labc, LAB_GRACE_MS);
		}
		mb__emit_change(s);
		return;
	}
	if (s->load_t0 > 0 && s->load_t1 == 0)
		s->load_t1 = mb_now_s();
	s->state = s->failed ? MB_SS_FAILED : MB_SS_DONE;
	mb_faults_stop(s->faults);
	uv_timer_stop(&s->duration_timer);
	uv_timer_stop(&s->listen_timer);
	if (s->load_t0 > 0)
		mb__conclude_run(s);
	if (!s->stress)
		s->series_on = false;
	mb__emit_change(s);
}

static void child_failed(struct mb_session *s, struct mb_child *c)
{
	char desc[1200], tail[2048];
	mb_child_describe_exit(c, desc, sizeof(desc));
	if (mb__role_of(c) == ROLE_LOAD && s->mpi && s->dead_rank >= 0) {
		/* name the rank, its host and its users, not just mpirun */
		char who[300];
		mb_load_ranks_name(&s->ranks, s->dead_rank, who, sizeof(who));
		snprintf(desc, sizeof(desc), "load %.300s %.250s (mpirun exit status %lld)", who,
			 s->dead_how, (long long)mb_child_exit_status(c));
	}
	mb_child_stderr_tail(c, tail, sizeof(tail));
	memcpy(s->fail_tail, tail, sizeof(s->fail_tail));
	s->failed = true;
	mb__emit_msg(s, "%s", desc);
	if (!s->fail_msg[0]) /* the cause, not what was done about it after */
		snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", s->message);
}

static void on_exit_cb(void *arg, struct mb_child *c)
{
	struct mb_session *s = arg;
	enum child_role role = mb__role_of(c);
	if (role == ROLE_STORE && c == s->store && s->state == MB_SS_RUNNING &&
	    mb_faults_store_exit_expected(s->faults)) {
		/* killed by an injected fault: restart it; the load reconnects */
		mb_child_release(c);
		s->store = NULL;
		mb__start_store(s);
		mb__emit_change(s);
		return;
	}
	bool clean = mb_child_exit_status(c) == 0 && mb_child_term_signal(c) == 0;
	bool asked = mb_child_stop_requested(c);
	/* init ends by itself; so may the load (its own duration), and the
	 * storage test (exit 1: its thresholds failed, a verdict, not a crash) */
	bool normal_end = clean && (role == ROLE_INIT || role == ROLE_LOAD);
	/* the check's exit 1 (messages missing) is a verdict, not a crash */
	if (role == ROLE_CHECK && mb_child_term_signal(c) == 0)
		normal_end = true;
	if (role == ROLE_STRESS && mb_child_term_signal(c) == 0 &&
	    (mb_child_exit_status(c) == 0 || mb_child_exit_status(c) == 1))
		normal_end = true;
	if (!asked && !normal_end)
		child_failed(s, c);
	switch (role) {
	case ROLE_INIT:
		s->init = NULL;
		if (s->state == MB_SS_INIT) {
			if (clean && !s->failed && s->embedded)
				mb__start_store(s);
			else if (clean && !s->failed)
				mb__start_load_engine(s); /* provisioned over IMAP */
			else
				mb__finish_load(s);
		} else if (s->state == MB_SS_STOPPING) {
			mb__finish_load(s);
		}
		break;
	case ROLE_LAB:
		s->labc = NULL;
		mb__lab_exited(s, asked);
		break;
	case ROLE_CHECK:
		s->check = NULL;
		mb__check_exited(s, c);
		break;
	case ROLE_STORE:
		/* kept for a fault without recovery (mb__conclude_run) */
		mb_child_stderr_tail(c, s->store_tail, sizeof(s->store_tail));
		s->store = NULL;
		if (s->load) {
			mb_child_stop(s->load, MB_SUP_GRACE_MS);
			s->state = MB_SS_STOPPING;
		} else if (s->state != MB_SS_IDLE) {
			mb__finish_load(s);
		}
		break;
	case ROLE_LOAD:
		s->load = NULL;
		s->load_t1 = mb_now_s();
		/* the load's own duration ended the run: the storage test too */
		if (s->p.duration_s > 0 && s->stress && !asked)
			mb_session_stop_stress(s);
		if (s->ack_fd >= 0) { /* every line came before the load's exit */
			close(s->ack_fd);
			s->ack_fd = -1;
		}
		if (s->store) {
			s->state = MB_SS_STOPPING;
			mb_child_stop(s->store, MB_SUP_GRACE_MS);
		} else {
			mb__finish_load(s);
		}
		break;
	case ROLE_STRESS:
		s->stress = NULL;
		if (!mb_session_load_active(s))
			s->series_on = false;
		break;
	}
	mb_child_release(c);
	mb__emit_change(s);
}

void mb__on_duration(uv_timer_t *t)
{
	struct mb_session *s = t->data;
	mb__emit_msg(s, "duration reached: stopping");
	mb_session_stop_load(s);
	if (s->stress)
		mb_session_stop_stress(s);
}

int mb_session_create(uv_loop_t *loop, const struct mb_session_events *ev, void *arg,
		      struct mb_session **out)
{
	struct mb_session *s = calloc(1, sizeof(*s));
	if (!s)
		return MB_ENOMEM;
	s->loop = loop;
	if (ev)
		s->ev = *ev;
	s->arg = arg;
	static const struct mb_sup_ops ops = {mb__on_stats, on_line, on_listening, on_exit_cb};
	int rc = mb_sup_create(loop, &ops, s, &s->sup);
	if (!rc)
		rc = mb_series_create(&s->series);
	if (!rc)
		rc = mb_histset_create(&s->hists);
	if (!rc)
		rc = mb_histset_create(&s->hists_warm);
	if (!rc)
		rc = mb_histset_create(&s->stress_hists);
	struct mb_fault_ops fo = mb__fault_ops;
	fo.arg = s;
	if (!rc)
		rc = mb_faults_create(loop, &fo, &s->faults);
	if (!rc)
		rc = mb_timeline_create(&s->timeline);
	if (!rc)
		rc = mb_srvmon_create(&s->srv);
	if (!rc)
		rc = mb_load_stats_create(&s->lx);
	if (rc) {
		mb_load_stats_destroy(s->lx);
		mb_srvmon_destroy(s->srv);
		mb_timeline_destroy(s->timeline);
		mb_sup_destroy(s->sup);
		mb_series_destroy(s->series);
		mb_histset_destroy(s->hists);
		mb_histset_destroy(s->hists_warm);
		mb_histset_destroy(s->stress_hists);
		free(s);
		return rc;
	}
	mb_session_params_default(&s->p);
	mb_thresholds_init(&s->th, NULL, NULL);
	s->ack_fd = -1;
	s->dead_rank = -1;
	uv_timer_init(loop, &s->tick);
	uv_timer_init(loop, &s->listen_timer);
	uv_timer_init(loop, &s->duration_timer);
	uv_timer_init(loop, &s->check_timer);
	s->tick.data = s->listen_timer.data = s->duration_timer.data = s->check_timer.data = s;
	uv_timer_start(&s->tick, mb__on_tick, 1000, 1000);
	if (mb_platform_string(s->platform, sizeof(s->platform)))
		snprintf(s->platform, sizeof(s->platform), "n/a");
	bool smt;
	s->smt = mb_smt_active(&smt) == 0 ? smt : -1;
	*out = s;
	return 0;
}

static void on_timer_closed(uv_handle_t *h)
{
	struct mb_session *s = h->data;
	if (--s->closing_handles == 0)
		free(s);
}

void mb_session_destroy(struct mb_session *s)
{
	if (!s)
		return;
	mb_faults_destroy(s->faults);
	s->faults = NULL;
	if (s->ack_log[0] && s->ack_is_tmp)
		unlink(s->ack_log);
	mb_sup_destroy(s->sup);
	s->sup = NULL;
	if (s->ack_fd >= 0)
		close(s->ack_fd);
	mb_series_destroy(s->series);
	mb_histset_destroy(s->hists);
	mb_histset_destroy(s->hists_warm);
	mb_histset_destroy(s->stress_hists);
	mb_timeline_destroy(s->timeline);
	mb_srvmon_destroy(s->srv);
	mb_load_stats_destroy(s->lx);
	/* the lab's servers, should the lab have been killed before it could
	 * stop them (they run in process groups of their own) */
	for (int i = 0; i < s->nsrv_seen; i++)
		if (s->srv_seen[i] > 0 && kill(-s->srv_seen[i], 0) == 0)
			kill(-s->srv_seen[i], SIGKILL);
	s->closing_handles = 4;
	uv_close((uv_handle_t *)&s->check_timer, on_timer_closed);
	uv_close((uv_handle_t *)&s->tick, on_timer_closed);
	uv_close((uv_handle_t *)&s->listen_timer, on_timer_closed);
	uv_close((uv_handle_t *)&s->duration_timer, on_timer_closed);
}

int mb_session_set_program(struct mb_session *s, const char *path)
{
	return mb_sup_set_program(s->sup, path);
}

int mb_session_start_load(struct mb_session *s)
{
	if (!s->configured)
		return MB_ESTATE;
	if (mb_session_load_active(s))
		return MB_EBUSY;
	s->failed = false;
	s->fail_tail[0] = '\0';
	s->store_tail[0] = '\0';
	s->fail_msg[0] = '\0';
	s->load_t0 = s->load_t1 = 0;
	s->saved_path[0] = '\0';
	if (mkdir(s->p.data_dir, 0700) && errno != EEXIST) {
		mb__emit_msg(s, "cannot create %s: %s", s->p.data_dir, strerror(errno));
		return mb_from_errno(errno);
	}
	mb__reset_measurements(s);
	s->check_done = s->check_ran = s->interrupted = false;
	s->check_tries = 0;
	s->check_t0 = 0;
	s->ack_must = s->ack_missing = 0;
	s->check_note[0] = '\0';
	s->lab_restarts = 0;
	s->srv_t = 0;
	mb_srvmon_reset(s->srv);
	if (s->srv_on)
		mb__server_unmeasured(s, "");
	if (s->lab) {
		/* the lab, provisioning over IMAP, the load, the check, the stop */
		mb__start_lab(s);
		return s->failed ? MB_ECHILD : 0;
	}
	if (s->imap && s->tcfg.address[0][0]) {
		/* an IMAP server started elsewhere: provisioned (resumable) first */
		mb__start_imap_init(s);
		return s->failed ? MB_ECHILD : 0;
	}
	if (!s->embedded) {
		/* an external target: the load engine only, against its accounts */
		char acc[MB_PATH_MAX + 32];
		mb__accounts_path(s, acc, sizeof(acc));
		if ((s->tops->flags & MB_TARGET_F_NO_IO) && !s->sc.target_accounts[0] &&
		    mb__accounts_users(acc) < mb_session_users(s)) {
			/* a target without a server has no accounts of its own:
			 * generate the scenario's (names, lists) for this run */
			snprintf(acc, sizeof(acc), "%s/accounts.json", s->p.data_dir);
			int rc = mb__write_generated_accounts(s, acc);
			if (rc) {
				mb__emit_msg(s, "target %s: cannot write the accounts %s: %s",
					     s->target_str, acc, mb_strerror(rc));
				return rc;
			}
			mb__emit_msg(s, "target %s: generated the accounts of %d users in %s",
				     s->target_str, mb_session_users(s), acc);
		}
		if (access(acc, R_OK) != 0) {
			mb__emit_msg(
			    s, "target %s: no accounts file %s (target.accounts in the scenario)",
			    s->target_str, acc);
			return MB_ENOTFOUND;
		}
		mb__start_load_engine(s);
		return s->failed ? MB_ECHILD : 0;
	}
	if (mb_session_initialised(s) && !s->init_restart)
		mb__start_store(s);
	else
		mb__start_init(s);
	return s->failed ? MB_ECHILD : 0;
}

int mb_session_reinit_and_start(struct mb_session *s)
{
	if (mb_session_load_active(s) || s->stress)
		return MB_EBUSY;
	s->init_restart = true;
	int rc = mb_session_start_load(s);
	s->init_restart = false;
	return rc;
}

int mb_session_stop_load(struct mb_session *s)
{
	switch (s->state) {
	case MB_SS_INIT:
		s->state = MB_SS_STOPPING;
		if (s->init)
			mb_child_stop(s->init, MB_SUP_GRACE_MS);
		break;
	case MB_SS_STARTING:
	case MB_SS_RUNNING:
		s->state = MB_SS_STOPPING;
		if (s->load) {
			s->load_t1 = mb_now_s();
			mb_child_stop(s->load, MB_SUP_GRACE_MS);
		} else if (s->store) {
			mb_child_stop(s->store, MB_SUP_GRACE_MS);
		} else if (s->labc) {
			mb_child_stop(s->labc, LAB_GRACE_MS);
		}
		break;
	default:
		return 0;
	}
	mb__emit_msg(s, "stopping the load");
	mb__emit_change(s);
	return 0;
}

void mb_session_stop_all(struct mb_session *s)
{
	s->interrupted = true;
	uv_timer_stop(&s->check_timer);
	if (s->labc) /* its servers get their time to stop */
		mb_child_stop(s->labc, LAB_GRACE_MS);
	if (s->state == MB_SS_STOPPING && !s->load && !s->init && !s->check && !s->labc) {
		s->check_done = true;
		mb__finish_load(s); /* between two check attempts */
	}
	mb_session_stop_load(s);
	mb_session_stop_stress(s);
	mb_sup_stop_all(s->sup, MB_SUP_GRACE_MS);
}

enum mb_session_state mb_session_state(const struct mb_session *s) { return s->state; }

const char *mb_session_state_str(enum mb_session_state st)
{
	static const char *const n[] = {"idle",	    "initialising", "starting", "running",
					"stopping", "done",	    "failed"};
	return (unsigned)st < 7 ? n[st] : "?";
}

bool mb_session_load_active(const struct mb_session *s)
{
	return s->state >= MB_SS_INIT && s->state <= MB_SS_STOPPING;
}

bool mb_session_stress_active(const struct mb_session *s) { return s->stress != NULL; }

int mb_session_stress_threads(const struct mb_session *s) { return s->stress_threads; }

void mb_session_set_stress_kind(struct mb_session *s, enum mb_stress_kind k) { s->stress_kind = k; }

enum mb_stress_kind mb_session_stress_kind(const struct mb_session *s) { return s->stress_kind; }

void mb_session_set_stress_threads(struct mb_session *s, int threads)
{
	if (threads >= 1 && threads <= MB_STRESS_THREADS_MAX)
		s->stress_threads = threads;
}

int mb_session_children(const struct mb_session *s) { return s->sup ? mb_sup_live(s->sup) : 0; }

bool mb_session_init_progress(const struct mb_session *s, double *pct, double *eta_s)
{
	if (s->state != MB_SS_INIT)
		return false;
	*pct = s->init_pct;
	double el = mb_now_s() - s->init_t0;
	*eta_s = s->init_pct > 0.5 ? el * (100.0 - s->init_pct) / s->init_pct : -1;
	return true;
}

double mb_session_elapsed(const struct mb_session *s)
{
	if (s->load_t0 <= 0)
		return 0;
	return (s->load_t1 > 0 ? s->load_t1 : mb_now_s()) - s->load_t0;
}

const char *mb_session_message(const struct mb_session *s) { return s->message; }

const char *mb_session_failure_detail(const struct mb_session *s)
{
	return s->failed ? s->fail_tail : "";
}

bool mb_session_failed(const struct mb_session *s) { return s->failed; }

const char *mb_session_platform(const struct mb_session *s) { return s->platform; }

const struct mb_load_ranks *mb_session_load_ranks(const struct mb_session *s) { return &s->ranks; }

const char *mb_session_load_desc(const struct mb_session *s) { return s->load_desc; }

int mb_session_smt(const struct mb_session *s) { return s->smt; }
