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

#include "cmd.h"
#include "core/error.h"
#include "db/db.h"

struct check_opts {
	const char *data;
	unsigned cache_mb;
	bool quiet;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mailbench check --data DIR [--cache-mb N] [--quiet]\n\n"
		   "Verify every database and log of a data directory: page checksums,\n"
		   "B+tree order and links, long-value chains, free-space accounting and\n"
		   "log record checksums.  Each storage group's log is replayed first.\n\n"
		   "  -d, --data DIR      the data directory (DIR/sgN/..., DIR/stress/, or one\n"
		   "                      storage group directory)\n"
		   "  -c, --cache-mb N    database cache for the check, MiB (default 64)\n"
		   "  -q, --quiet         print only problems\n"
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
		{"cache-mb", required_argument, NULL, 'c'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct check_opts o = {.data = NULL, .cache_mb = 64};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:c:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.data = optarg;
			break;
		case 'c': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 1 << 20) {
				fprintf(stderr, "mailbench check: --cache-mb: '%s' is not a size in "
						"MiB (1..1048576)\n",
					optarg);
				return MB_EXIT_USAGE;
			}
			o.cache_mb = (unsigned)v;
			break;
		}
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return MB_EXIT_OK;
		default:
			usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mailbench check: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return MB_EXIT_USAGE;
	}
	if (!o.data) {
		fprintf(stderr, "mailbench check: --data DIR is required\n");
		usage(stderr);
		return MB_EXIT_USAGE;
	}
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	unsigned printed = 0;
	int r = mb_db_check_dir(o.data, o.cache_mb, on_problem, &printed, &rep);
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
	if (rep.problems) {
		if (!printed)
			printf("problem: %s\n", rep.first_problem);
		return MB_EXIT_THRESHOLDS;
	}
	return MB_EXIT_OK;
}
