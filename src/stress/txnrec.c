/* txnrec.c: the two test types that run over transactions mode's
 * databases (see txnmode.h): the checksum pass (every page of every
 * database read and verified, as Jetstress's checksum test) and soft
 * recovery (a child process fills the log to the asked number of
 * segments and exits without a checkpoint, as a crash leaves it; the
 * parent opens the group, which replays the log, and times the replay).
 *
 *   parent: fork -> [child: open, run phases until the log holds the
 *           segments, report through a pipe, _exit, no close]
 *           -> read the report -> open (recovery) -> close
 *
 * Invariant: the child never closes or checkpoints the group; the parent
 * opens it only after the child has exited.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "db/db.h"
#include "stress/txnmode.h"
#include "stress/txnmode_int.h"

/* ---- checksum pass ---- */

struct chk_arg {
	struct mb_stress_slot *slot;
	const char *path;
};

static void chk_cb(void *arg, const char *msg)
{
	struct chk_arg *a = arg;
	mb_stress_slot_error(a->slot, a->path, UINT64_MAX, MB_ECORRUPT, msg);
}

int mb_txnmode_checksum(struct mb_txnmode *m, struct mb_stress_slot *slot, uint64_t *pages,
			uint64_t *bytes, double *seconds)
{
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	uint64_t t0 = mb_stress_now_ns();
	int first = 0;
	for (unsigned d = 0; d < m->cfg.databases; d++) {
		struct chk_arg a = {slot, m->db[d].path};
		int rc = mb_db_check(m->db[d].db, chk_cb, &a, &rep);
		if (rc && rc != MB_ECORRUPT)
			mb_stress_slot_error(slot, m->db[d].path, UINT64_MAX, rc,
					     "the check could not run");
		if (rc && !first)
			first = rc;
	}
	*seconds = (double)(mb_stress_now_ns() - t0) / 1e9;
	/* the check reads every page of each file; rep.bytes is their size */
	*bytes = rep.bytes;
	*pages = rep.bytes / m->cfg.page_size;
	return first;
}

/* ---- soft recovery ---- */

struct child_report {
	int rc;
	uint64_t log_bytes;
	double generate_s;
	char msg[1024];
};

static int child_generate(const struct mb_txnmode_cfg *cfg, int threads, unsigned segments,
			  struct child_report *rep)
{
	struct mb_txnmode *m;
	int rc = mb__txn_init(cfg, &m, rep->msg, sizeof(rep->msg));
	if (rc)
		return rc;
	if (!mb__txn_marker_read(m)) {
		snprintf(rep->msg, sizeof(rep->msg), "%.900s: no test databases", m->dir);
		mb__txn_free(m);
		return MB_ENOTFOUND;
	}
	struct mb_sg_options o;
	mb__txn_sg_options(m, &o, false);
	o.checkpoint_bytes = UINT64_MAX; /* no automatic checkpoint */
	if ((rc = mb_sg_open(&o, &m->sg)) ||
	    (rc = mb__txn_open_dbs(m, false, rep->msg, sizeof(rep->msg)))) {
		if (!rep->msg[0])
			snprintf(rep->msg, sizeof(rep->msg), "%.900s: %s", m->dir, mb_strerror(rc));
		return rc; /* the process exits: nothing to release */
	}
	struct mb_stress_acct *acct;
	if ((rc = mb_stress_acct_create(&acct)))
		return rc;
	struct mb_sg_stats s0;
	mb_sg_stats_get(m->sg, &s0);
	uint64_t target = (uint64_t)segments * MB_LOG_SEGMENT_SIZE;
	struct mb_stress_worker w;
	mb_txnmode_worker(m, &w);
	/* run short phases until the log holds enough */
	uint64_t t0 = mb_stress_now_ns();
	for (int i = 0; i < 18000; i++) {
		struct mb_stress_window *win;
		double secs;
		if ((rc = mb_stress_window_create(&win)))
			return rc;
		rc = mb_stress_run_phase(&w, acct, threads, 0, 0.2, NULL, NULL, win, &secs);
		mb_stress_window_destroy(win);
		if (!rc && mb_stress_acct_errors(acct))
			rc = MB_EIO;
		if (rc) {
			mb_stress_acct_first_error(acct, rep->msg, sizeof(rep->msg), NULL, 0, NULL);
			return rc;
		}
		if ((rc = mb_sg_flush(m->sg)))
			return rc;
		struct mb_sg_stats s;
		mb_sg_stats_get(m->sg, &s);
		if (s.checkpoint_depth >= target)
			break;
	}
	struct mb_sg_stats s;
	mb_sg_stats_get(m->sg, &s);
	rep->generate_s = (double)(mb_stress_now_ns() - t0) / 1e9;
	rep->log_bytes = s.checkpoint_depth;
	if (s.checkpoint_depth < target) {
		snprintf(rep->msg, sizeof(rep->msg), "the log reached only %llu bytes",
			 (unsigned long long)s.checkpoint_depth);
		return MB_ETIMEDOUT;
	}
	return 0;
}

int mb_txnmode_soft_recovery(const struct mb_txnmode_cfg *cfg, int threads, unsigned segments,
			     struct mb_softrec *out, char *msg, size_t len)
{
	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	int fds[2];
	if (pipe(fds))
		return MB_ESYS;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return MB_ESYS;
	}
	if (pid == 0) {
		close(fds[0]);
		struct child_report rep;
		memset(&rep, 0, sizeof(rep));
		rep.rc = child_generate(cfg, threads, segments, &rep);
		if (rep.rc && !rep.msg[0])
			snprintf(rep.msg, sizeof(rep.msg), "%s", mb_strerror(rep.rc));
		ssize_t n = write(fds[1], &rep, sizeof(rep));
		/* no close, no checkpoint: the group is left as a crash leaves it */
		_exit(n == (ssize_t)sizeof(rep) ? 0 : 3);
	}
	close(fds[1]);
	struct child_report rep;
	memset(&rep, 0, sizeof(rep));
	size_t got = 0;
	while (got < sizeof(rep)) {
		ssize_t n = read(fds[0], (char *)&rep + got, sizeof(rep) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(rep)) {
		snprintf(msg, len, "the log-generating process ended without a report");
		return MB_ECHILD;
	}
	if (rep.rc) {
		snprintf(msg, len, "generating the log: %s", rep.msg);
		return rep.rc;
	}
	struct mb_txnmode *m;
	int rc = mb__txn_init(cfg, &m, msg, len);
	if (rc)
		return rc;
	struct mb_sg_options o;
	mb__txn_sg_options(m, &o, false);
	uint64_t t0 = mb_stress_now_ns();
	rc = mb_sg_open(&o, &m->sg);
	uint64_t t1 = mb_stress_now_ns();
	if (rc) {
		snprintf(msg, len, "%s: recovery failed: %s", m->dir, mb_strerror(rc));
		mb__txn_free(m);
		return rc;
	}
	struct mb_sg_stats s;
	mb_sg_stats_get(m->sg, &s);
	out->segments = (unsigned)((rep.log_bytes + MB_LOG_SEGMENT_SIZE - 1) / MB_LOG_SEGMENT_SIZE);
	out->log_bytes = rep.log_bytes;
	out->records = s.recovered_records;
	out->generate_s = rep.generate_s;
	out->replay_s = (double)(t1 - t0) / 1e9;
	if (out->replay_s > 0) {
		out->segments_per_s = (double)rep.log_bytes / MB_LOG_SEGMENT_SIZE / out->replay_s;
		out->mb_per_s = (double)rep.log_bytes / 1048576.0 / out->replay_s;
	}
	rc = mb_sg_close(m->sg);
	m->sg = NULL;
	if (rc)
		snprintf(msg, len, "%s: closing after recovery: %s", m->dir, mb_strerror(rc));
	mb__txn_free(m);
	return rc;
}
