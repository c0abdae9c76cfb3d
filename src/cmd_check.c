/* cmd_check.c: `mailbench check --data DIR`: the integrity check of every
 * storage group, database and log under a data directory (see
 * mb_db_check_dir in db/db.h).  Each group is opened as a mount would (its
 * log is replayed first), checked read-only and closed.
 * Exit codes: 0 clean, 1 problems found (each printed, naming file, tree and
 * page), 2 usage or input error, 3 runtime failure (e.g. the data is in use
 * by a running store).
 * Options are parsed from one table (struct check_opts + long_opts below) so
 * more checks (e.g. an acknowledgement log) can be added as one option and
 * one call after the database check. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/cli.h"
#include "core/error.h"
#include "core/topology.h"
#include "db/db.h"
#include "load/ackcheck.h"

struct check_opts {
	const char *data;
	const char *log_dir;
	unsigned cache_mb;
	bool quiet;
	const char *ack_log;    /* --ack-log: the load engine's acknowledgements */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mailbench check --data DIR [--cache-mb N] [--quiet] [--ack-log FILE]\n\n"
		   "Verify every database and log of a data directory: page checksums,\n"
		   "B+tree order and links, long-value chains, free-space accounting and\n"
		   "log record checksums.  Each storage group's log is replayed first.\n\n"
		   "  -d, --data DIR      the data directory (DIR/sgN/..., DIR/stress/, or one\n"
		   "                      storage group directory)\n"
		   "  -l, --log-dir DIR   the logs are in DIR/sgN (default: as recorded in\n"
		   "                      DATA/topology.json, else DATA/sgN/log)\n"
		   "  -c, --cache-mb N    database cache for the check, MiB (default 64)\n"
		   "  -q, --quiet         print only problems\n"
		   "  -a, --ack-log FILE  also verify the load engine's ack log (mailbench load\n"
		   "                      --ack-log): every acknowledged create not deleted is\n"
		   "                      present, every acknowledged delete is absent\n"
		   "  -h, --help          this help\n\n"
		   "exit codes: 0 clean, 1 problems found, 2 usage error, 3 runtime failure\n");
}

static void on_problem(void *arg, const char *msg)
{
	unsigned *n = arg;
	(*n)++;
	fprintf(stdout, "problem: %s\n", msg);
}

int mb_cmd_check(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{"data", required_argument, NULL, 'd'},
		{"log-dir", required_argument, NULL, 'l'},
		{"cache-mb", required_argument, NULL, 'c'},
		{"quiet", no_argument, NULL, 'q'},
		{"ack-log", required_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct check_opts o = {.data = NULL, .cache_mb = 64};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:l:c:qa:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.data = optarg;
			break;
		case 'l':
			o.log_dir = optarg;
			break;
		case 'c': {
			long v;
			if (mb_cli_long("check", "--cache-mb", optarg, 1, 1 << 20, &v))
				return MB_EXIT_USAGE;
			o.cache_mb = (unsigned)v;
			break;
		}
		case 'q':
			o.quiet = true;
			break;
		case 'a':
			o.ack_log = optarg;
			break;
		case 'h':
			usage(stdout);
			return MB_EXIT_OK;
		default:
			usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (mb_cli_no_operands("check", argc, argv)) {
		usage(stderr);
		return MB_EXIT_USAGE;
	}
	if (!o.data) {
		fprintf(stderr, "mailbench check: --data DIR is required\n");
		usage(stderr);
		return MB_EXIT_USAGE;
	}
	/* the log directory init recorded, unless given */
	char topo_path[4200], topo_logs[4096] = "";
	snprintf(topo_path, sizeof(topo_path), "%s/topology.json", o.data);
	if (!o.log_dir && access(topo_path, F_OK) == 0) {
		struct mb_topology *topo = NULL;
		char err[256];
		if (mb_topology_read(topo_path, &topo, err, sizeof(err)) == 0) {
			snprintf(topo_logs, sizeof(topo_logs), "%s", mb_topology_info(topo)->log_dir);
			mb_topology_destroy(topo);
			if (topo_logs[0])
				o.log_dir = topo_logs;
		} else {
			fprintf(stderr, "mailbench check: %s\n", err);
			return MB_EXIT_USAGE;
		}
	}
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	unsigned printed = 0;
	int r = mb_db_check_dir(o.data, o.log_dir, o.cache_mb, on_problem, &printed, &rep);
	if (r == MB_ENOTFOUND) {
		fprintf(stderr, "mailbench check: --data: %s: no such directory\n", o.data);
		return MB_EXIT_USAGE;
	}
	if (r == MB_EBUSY) {
		fprintf(stderr, "mailbench check: %s is in use by a running store (stop it first)\n",
			o.data);
		return MB_EXIT_RUNTIME;
	}
	if (r < 0 && r != MB_ECORRUPT) {
		fprintf(stderr, "mailbench check: %s: %s\n", o.data, mb_strerror(r));
		return MB_EXIT_RUNTIME;
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
		printf("%.1f MiB in %.2f s (%.1f MiB/s): %s\n", mb, rep.seconds,
		       rep.seconds > 0 ? mb / rep.seconds : 0.0,
		       rep.problems ? "PROBLEMS FOUND" : "clean");
	}
	if (rep.groups == 0 && !rep.problems) {
		fprintf(stderr, "mailbench check: %s holds no storage group\n", o.data);
		return MB_EXIT_USAGE;
	}
	int ack = o.ack_log ? mb_ackcheck_cmd(o.data, o.ack_log) : MB_EXIT_OK;
	if (rep.problems) {
		if (!printed)
			printf("problem: %s\n", rep.first_problem);
		return ack > MB_EXIT_THRESHOLDS ? ack : MB_EXIT_THRESHOLDS;
	}
	return ack;
}
