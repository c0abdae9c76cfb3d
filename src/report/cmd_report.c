/* cmd_report.c: `mailbench report` (the stakeholder HTML report of saved
 * runs, capacity searches and storage-test results) and `mailbench
 * compare` (runs side by side with their differences, as text, JSON or
 * CSV).  Both read the JSON documents mailbench writes; bad input (a file
 * that does not parse or is of no known kind) names the file, exit 2.
 * Invariant: neither command starts a child or touches a data directory. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/error.h"
#include "report/html.h"
#include "report/runcmp.h"

#define MAX_DOCS 32

static int load_docs(const char *cmd, int argc, char **argv, json_t **docs, size_t *n)
{
	*n = 0;
	for (int i = 0; i < argc; i++) {
		if (*n == MAX_DOCS) {
			fprintf(stderr, "mailbench %s: at most %d files\n", cmd, MAX_DOCS);
			return MB_EINVAL;
		}
		json_error_t e;
		json_t *j = json_load_file(argv[i], 0, &e);
		if (!j) {
			fprintf(stderr, "mailbench %s: %s:%d: %s\n", cmd, argv[i], e.line, e.text);
			return MB_EPROTO;
		}
		docs[(*n)++] = j;
	}
	return 0;
}

static void free_docs(json_t **docs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(docs[i]);
}

struct report_args {
	const char *output;
};

static int report_main(void *args, int argc, char **argv)
{
	struct report_args *a = args;
	if (argc < 1) {
		fprintf(stderr, "mailbench report: no input file (FILE.json ...)\n");
		return MB_EXIT_USAGE;
	}
	json_t *docs[MAX_DOCS];
	size_t n;
	if (load_docs("report", argc, argv, docs, &n)) {
		free_docs(docs, n);
		return MB_EXIT_USAGE;
	}
	char why[2048] = "";
	int rc =
	    mb_html_report_file(docs, (const char *const *)argv, n, a->output, why, sizeof(why));
	free_docs(docs, n);
	if (rc) {
		fprintf(stderr, "mailbench report: %s\n", why[0] ? why : mb_strerror(rc));
		return rc == MB_EPROTO || rc == MB_EINVAL ? MB_EXIT_USAGE : MB_EXIT_RUNTIME;
	}
	return MB_EXIT_OK;
}

#define RPA struct report_args
static const struct mb_opt report_opts[] = {
    {.path = "output",
     .flag = "output",
     .sflag = 'o',
     .metavar = "FILE",
     .type = MB_OT_ARG,
     .off = offsetof(RPA, output),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "the report (HTML) to write"},
};

const struct mb_cmd_entry mb_cmd_report_entry = {
    .name = "report",
    .usage = "FILE.json [FILE.json ...] -o REPORT.html",
    .summary = "the HTML report of runs, capacity searches and storage tests",
    .about = "Write one self-contained HTML page (charts inlined, no network needed to open\n"
	     "it) from run summaries (mailbench run --json, DATA/runs/*.json), capacity\n"
	     "searches (mailbench capacity --json, DATA/capacity/*.json) and storage-test\n"
	     "results (mailbench storage-test --json).  Runs become columns of the comparison\n"
	     "table in the order given; run 1 is the reference of the differences.",
    .epilog = "exit codes: 0 written, 2 usage or input error, 3 cannot write",
    .opts = report_opts,
    .nopts = (int)(sizeof(report_opts) / sizeof(report_opts[0])),
    .args_size = sizeof(struct report_args),
    .flags = MB_CMD_OPERANDS,
    .run = report_main,
};

struct compare_args {
	bool json, csv, no_published;
	int ref, width;
};

static int compare_main(void *args, int argc, char **argv)
{
	struct compare_args *a = args;
	int fmt = a->json ? 1 : a->csv ? 2 : 0;
	long ref = a->ref > 0 ? a->ref : 1, width = a->width;
	bool pub = !a->no_published;
	if (a->json && a->csv) {
		fprintf(stderr, "mailbench compare: --json and --csv: choose one\n");
		return MB_EXIT_USAGE;
	}
	int nfiles = argc;
	if (nfiles < 1 || nfiles > MB_RUNCMP_MAX_RUNS) {
		fprintf(stderr, "mailbench compare: give 1 to %d run files (got %d)\n",
			MB_RUNCMP_MAX_RUNS, nfiles);
		return MB_EXIT_USAGE;
	}
	if (ref > nfiles) {
		fprintf(stderr, "mailbench compare: --ref %ld: only %d runs given\n", ref, nfiles);
		return MB_EXIT_USAGE;
	}
	struct mb_run_summary *sums = calloc((size_t)nfiles, sizeof(*sums));
	const struct mb_run_summary *runs[MB_RUNCMP_MAX_RUNS];
	const char *targets[MB_RUNCMP_MAX_RUNS];
	char tbuf[MB_RUNCMP_MAX_RUNS][128];
	if (!sums)
		return MB_EXIT_RUNTIME;
	int exit_code = MB_EXIT_OK;
	for (int i = 0; i < nfiles; i++) {
		const char *path = argv[i];
		json_error_t e;
		json_t *j = json_load_file(path, 0, &e);
		char why[1024] = "";
		if (!j) {
			fprintf(stderr, "mailbench compare: %s:%d: %s\n", path, e.line, e.text);
			exit_code = MB_EXIT_USAGE;
			break;
		}
		if (mb_summary_from_json(j, &sums[i], why, sizeof(why))) {
			fprintf(stderr, "mailbench compare: %s: %s\n", path, why);
			json_decref(j);
			exit_code = MB_EXIT_USAGE;
			break;
		}
		/* the target, where the run recorded one */
		if (!mb_runcmp_target_of(j, tbuf[i], sizeof(tbuf[i])))
			tbuf[i][0] = '\0';
		targets[i] = tbuf[i];
		runs[i] = &sums[i];
		json_decref(j);
	}
	struct mb_scenario *sc = NULL;
	if (exit_code == MB_EXIT_OK && pub) {
		sc = calloc(1, sizeof(*sc));
		if (sc && mb_scenario_load(runs[ref - 1]->scenario, sc, NULL)) {
			free(sc);
			sc = NULL;
		}
	}
	struct mb_runcmp_input in = {sc, runs, targets, (size_t)nfiles, (size_t)ref - 1};
	if (exit_code == MB_EXIT_OK) {
		char warn[4096];
		if (mb_runcmp_warnings(&in, warn, sizeof(warn)) > 0)
			fputs(warn, stderr);
		if (fmt == 1) {
			json_t *j = mb_runcmp_json(&in);
			if (!j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10)))
				exit_code = MB_EXIT_RUNTIME;
			printf("\n");
			json_decref(j);
		} else {
			struct mb_table *t;
			if (mb_runcmp_build(&in, &t)) {
				exit_code = MB_EXIT_RUNTIME;
			} else {
				if (fmt == 2) {
					mb_runcmp_csv(t, stdout);
				} else {
					const char *cols = getenv("COLUMNS");
					int w = width			   ? (int)width
						: cols && atoi(cols) >= 40 ? atoi(cols)
									   : 132;
					mb_table_print(t, stdout, w);
				}
				mb_table_destroy(t);
			}
		}
	}
	free(sc);
	free(sums);
	return exit_code;
}

#define CPA struct compare_args
static const struct mb_opt compare_opts[] = {
    {.path = "json",
     .flag = "json",
     .type = MB_OT_FLAG,
     .off = offsetof(CPA, json),
     .help = "machine-readable (mailbench-compare/1)"},
    {.path = "csv",
     .flag = "csv",
     .type = MB_OT_FLAG,
     .off = offsetof(CPA, csv),
     .help = "the table as CSV"},
    {.path = "ref",
     .flag = "ref",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(CPA, ref),
     .def = 1,
     .min = 1,
     .max = MB_RUNCMP_MAX_RUNS,
     .help = "the reference run (its place among the files)"},
    {.path = "no-published",
     .flag = "no-published",
     .type = MB_OT_FLAG,
     .off = offsetof(CPA, no_published),
     .help = "leave out the published columns"},
    {.path = "width",
     .flag = "width",
     .sflag = 'w',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(CPA, width),
     .def = 0,
     .min = 40,
     .max = 1000,
     .dtext = "$COLUMNS, else 132",
     .help = "text width"},
};

const struct mb_cmd_entry mb_cmd_compare_entry = {
    .name = "compare",
    .usage = "RUN.json [RUN.json ...] [--json | --csv] [--ref N]",
    .summary = "saved runs side by side with their differences",
    .about = "Print saved runs side by side: the published columns of the reference run's\n"
	     "scenario, each run's averages, and each run's difference against the reference\n"
	     "in percent (per user-equivalent for rates and processor time when the loads\n"
	     "differ, marked /UE).  Warns on stderr when a run's scenario or target differs\n"
	     "from the reference's.",
    .epilog = "exit codes: 0 ok, 2 usage or input error",
    .opts = compare_opts,
    .nopts = (int)(sizeof(compare_opts) / sizeof(compare_opts[0])),
    .args_size = sizeof(struct compare_args),
    .flags = MB_CMD_OPERANDS,
    .run = compare_main,
};
