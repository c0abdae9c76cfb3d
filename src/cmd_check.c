/* cmd_check.c: `mailbench check --data DIR`: the integrity check of every
 * storage group, database and log under a data directory (see
 * mb_db_check_dir in db/db.h), then, for a mailbox data directory, the
 * store's content check (mb_store_check_content, store/ackcheck.h: every
 * message's body and attachments present, single-instance counts right,
 * nothing shared left without a row).  Each group is opened as a mount
 * would (its log is replayed first), checked read-only and closed.
 * Exit codes: 0 clean, 1 problems found (each printed, naming file, tree and
 * page), 2 usage or input error, 3 runtime failure (e.g. the data is in use
 * by a running store).
 * Options are one table (check_opts_table below, core/opt.h) so more
 * checks can be added as one option and one call after the database
 * check. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/options.h"
#include "core/error.h"
#include "core/topology.h"
#include "db/db.h"
#include "store/ackcheck.h"

struct check_opts {
	char data[MB_PATH_MAX];
	char log_dir_buf[MB_PATH_MAX];
	const char *log_dir; /* NULL: as recorded, else log_dir_buf */
	double cache_mb;
	bool quiet;
	const char *ack_log; /* --ack-log: the load engine's acknowledgements */
};

static void on_problem(void *arg, const char *msg)
{
	unsigned *n = arg;
	(*n)++;
	fprintf(stdout, "problem: %s\n", msg);
}

/* Every database DATA/topology.json lists (topo, NULL: none) must exist: a
 * deleted database file is a problem, not a clean directory.  Returns how
 * many are missing. */
static unsigned topo_db_missing(const char *data, const struct mb_topology *topo,
				void (*cb)(void *, const char *), void *arg,
				struct mb_check_report *rep)
{
	char path[4200];
	unsigned missing = 0;
	if (!topo)
		return 0;
	int n = mb_topology_info(topo)->databases;
	for (int d = 1; d <= n; d++) {
		char msg[4400];
		snprintf(path, sizeof(path), "%s/sg%d/db%02d.mdb", data, mb_topology_db_sg(topo, d),
			 d);
		if (access(path, F_OK) == 0)
			continue;
		snprintf(msg, sizeof(msg), "%s: missing (topology.json lists database %d)", path,
			 d);
		cb(arg, msg);
		if (!rep->first_problem[0])
			snprintf(rep->first_problem, sizeof(rep->first_problem), "%.500s", msg);
		missing++;
	}
	return missing;
}

/* The checks of o.data; topo is DATA/topology.json read once (NULL when
 * there is none, has_topo false, or it could not be read; topo_err says
 * which). */
static int check_data(struct check_opts o, const struct mb_topology *topo, bool has_topo,
		      const char *topo_err)
{
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	unsigned printed = 0;
	int r =
	    mb_db_check_dir(o.data, o.log_dir, (unsigned)o.cache_mb, on_problem, &printed, &rep);
	if (r == MB_ENOTFOUND) {
		fprintf(stderr, "mailbench check: --data: %s: no such directory\n", o.data);
		return MB_EXIT_USAGE;
	}
	if (r == MB_EBUSY) {
		fprintf(stderr,
			"mailbench check: %s is in use by a running store (stop it first)\n",
			o.data);
		return MB_EXIT_RUNTIME;
	}
	if (r < 0 && r != MB_ECORRUPT) {
		fprintf(stderr, "mailbench check: %s: cannot check: %s (%s)%s\n", o.data,
			mb_strerror(r), mb_errname(r),
			r == MB_ENOSPC || r == MB_EROFS || r == MB_EACCES
			    ? "; recovery must write to the data directory: this is not damage"
			    : "");
		return MB_EXIT_RUNTIME;
	}
	rep.problems += topo_db_missing(o.data, topo, on_problem, &printed, &rep);
	/* the store's content (a mailbox data directory's databases, when the
	 * engine found them sound): bodies, attachments, shared instances */
	struct mb_content_report crep;
	bool content = false;
	memset(&crep, 0, sizeof(crep));
	if (r == 0 && !rep.problems && topo) {
		char err[1024] = "";
		int rc = mb_store_check_content(o.data, topo, on_problem, &printed, &crep, err,
						sizeof(err));
		if (rc) {
			fprintf(stderr, "mailbench check: %s: cannot check the content: %s\n",
				o.data, err[0] ? err : mb_strerror(rc));
			return MB_EXIT_RUNTIME;
		}
		content = true;
		rep.problems += crep.problems;
	}
	if (!o.quiet || rep.problems) {
		double mb = (double)rep.bytes / (1024.0 * 1024.0);
		printf("checked %llu storage group(s), %llu database(s), %llu tree(s): "
		       "%llu pages (%llu free), %llu keys, %llu long values; "
		       "%llu log segment(s), %llu log records\n",
		       (unsigned long long)rep.groups, (unsigned long long)rep.databases,
		       (unsigned long long)rep.trees, (unsigned long long)rep.pages,
		       (unsigned long long)rep.free_pages, (unsigned long long)rep.keys,
		       (unsigned long long)rep.long_values, (unsigned long long)rep.log_segments,
		       (unsigned long long)rep.log_records);
		if (content)
			printf("content of %llu message rows (%llu sharing %llu single-instance "
			       "contents): %llu problem(s)\n",
			       (unsigned long long)crep.rows, (unsigned long long)crep.shared_rows,
			       (unsigned long long)crep.contents,
			       (unsigned long long)crep.problems);
		printf("%.1f MiB in %.2f s (%.1f MiB/s): %s\n", mb, rep.seconds,
		       rep.seconds > 0 ? mb / rep.seconds : 0.0,
		       rep.problems ? "PROBLEMS FOUND" : "clean");
	}
	if (rep.groups == 0 && !rep.problems) {
		fprintf(stderr, "mailbench check: %s holds no storage group\n", o.data);
		return MB_EXIT_USAGE;
	}
	if (has_topo && !topo) {
		/* bad input: the engine's check ran (the log directory was
		 * given), the content's and the acknowledgements' cannot */
		fprintf(stderr, "mailbench check: %s (the content was not checked)\n", topo_err);
		return rep.problems ? MB_EXIT_THRESHOLDS : MB_EXIT_USAGE;
	}
	int ack = o.ack_log ? mb_ackcheck_cmd(o.data, topo, topo_err, o.ack_log) : MB_EXIT_OK;
	if (rep.problems) {
		if (!printed)
			printf("problem: %s\n", rep.first_problem);
		return ack > MB_EXIT_THRESHOLDS ? ack : MB_EXIT_THRESHOLDS;
	}
	return ack;
}

static int check_main(void *args, int argc, char **argv)
{
	struct check_opts o = *(struct check_opts *)args;
	(void)argc;
	(void)argv;
	o.log_dir = o.log_dir_buf[0] ? o.log_dir_buf : NULL;
	/* the topology, read once; the log directory init recorded, unless given */
	char topo_path[4200], topo_logs[4096] = "", topo_err[256] = "";
	snprintf(topo_path, sizeof(topo_path), "%s/topology.json", o.data);
	bool has_topo = access(topo_path, F_OK) == 0;
	if (!has_topo) /* why the ack check cannot run */
		snprintf(topo_err, sizeof(topo_err), "%.230s: no such file", topo_path);
	struct mb_topology *topo = NULL;
	if (has_topo && mb_topology_read(topo_path, &topo, topo_err, sizeof(topo_err)) != 0) {
		topo = NULL;
		if (!o.log_dir) {
			fprintf(stderr, "mailbench check: %s\n", topo_err);
			return MB_EXIT_USAGE;
		}
	}
	if (!o.log_dir && topo) {
		snprintf(topo_logs, sizeof(topo_logs), "%s", mb_topology_info(topo)->log_dir);
		if (topo_logs[0])
			o.log_dir = topo_logs;
	}
	int rc = check_data(o, topo, has_topo, topo_err);
	mb_topology_destroy(topo);
	return rc;
}

#define CO struct check_opts
static const struct mb_opt check_opts_table[] = {
    MB_OPTION_DATA(CO, data, 'd', MB_OPT_REQ, NULL),
    MB_OPTION_LOG_DIR(CO, log_dir_buf, 'l', "as recorded in DATA/topology.json, else DATA/sgN/log"),
    MB_OPTION_CACHE_MB(CO, cache_mb, 'c', 64, 0, "64"),
    MB_OPTION_QUIET(CO, quiet, 'q', "print only problems"),
    MB_OPTION_ACK_LOG(CO, ack_log, 'a',
		      "also verify the load engine's ack log (mailbench load --ack-log): every "
		      "acknowledged create not deleted is present, every acknowledged delete is "
		      "absent"),
};

const struct mb_cmd_entry mb_cmd_check_entry = {
    .name = "check",
    .usage = "--data DIR [--cache-mb N] [--quiet] [--ack-log FILE]",
    .summary = "integrity check of the databases and logs",
    .about = "Verify every database and log of a data directory (DIR/sgN/..., DIR/stress/, or\n"
	     "one storage group directory): page checksums, B+tree order and links,\n"
	     "long-value chains, free-space accounting and log record checksums.  Each storage\n"
	     "group's log is replayed first.  A database that DATA/topology.json lists but\n"
	     "that is missing is a problem; a disk that cannot be written (full, read-only:\n"
	     "recovery must write) is a runtime failure, never damage.  Then, for a mailbox\n"
	     "data directory (DATA/topology.json) the engine found sound, the store's content:\n"
	     "every message's body and attachments present, every single-instance count the\n"
	     "number of messages that share the content, nothing shared left without one.\n"
	     "A topology.json that cannot be read is bad input (exit 2); with --log-dir the\n"
	     "engine's check runs first, and the content is not checked.",
    .epilog = "exit codes: 0 clean, 1 problems found, 2 usage error, 3 runtime failure",
    .opts = check_opts_table,
    .nopts = (int)(sizeof(check_opts_table) / sizeof(check_opts_table[0])),
    .args_size = sizeof(struct check_opts),
    .run = check_main,
};
