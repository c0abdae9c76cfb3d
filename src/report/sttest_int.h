/* sttest_int.h: what `mailbench storage-test`'s two files share
 * (cmd_storage_test.c: the command, its options and the test types;
 * sttest_out.c: what a test writes: the table, --json, the error report):
 * the options, the runs measured and the test's state.
 * Nothing else includes it.
 */
#ifndef MB_REPORT_STTEST_INT_H
#define MB_REPORT_STTEST_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/scenario.h"
#include "core/stats.h"
#include "core/threshold.h"
#include "report/stortable.h"
#include "report/thresholds.h"
#include "stress/acct.h"
#include "stress/runner.h"
#include "stress/txnmode.h"

#define MAX_RUNS 64
#define TXN_MIN_DBS 16 /* transactions mode: one database per thread up to this */
#define MIN_CACHE_MB 4 /* the engine needs some frames for concurrent transactions */
#define CMD "storage-test"

enum { T_PERF, T_SOFTREC, T_CHECKSUM };

struct opts {
	const char *scenario;
	const char *data;
	const char *log_dir;
	double size_gb;
	bool size_set;
	bool autotune;
	int nthreads;
	int threads[MAX_RUNS];
	double duration, warmup;
	bool duration_set, warmup_set;
	bool io_mode, mode_set;
	int type;
	bool type_set;
	const char *read_max, *log_max; /* "" when not given */
	const char *json;
	int stats_fd;
	unsigned segments;
};

struct run {
	struct mb_stress_figures f;
	bool pass;
	char why[256];
	bool in_window;
	double rw, dl;
	char note[256];
	double cache_mb, hit_pct; /* transactions mode; hit_pct < 0: n/a */
	uint64_t dirty;		  /* transactions mode: dirty pages at the end */
};

struct ctx {
	struct opts o;
	struct mb_storage_cfg cfg;
	struct mb_stats_writer *stats;
	bool tty;
	bool io_mode;
	unsigned page_size;
	unsigned databases;
	uint64_t db_bytes;
	int cache_mb;		 /* transactions mode: the database cache used */
	struct mb_thresholds th; /* the storage counters' thresholds */
	struct mb_stress_limits lim;
	struct run runs[MAX_RUNS];
	int nruns;
	int best; /* auto: index of the chosen run, -1 none */
	bool reused;
	char err_msg[512];
	char err_file[1024];
	uint64_t err_off;
	bool have_err;
	struct mb_txnmode *txn;
	double phase_t0;
};

/* cmd_storage_test.c: a latency's JSON (null fields when not measured). */
json_t *mb__sttest_lat_json(const struct mb_lat *l);
/* sttest_out.c: the comparison's model of the runs; its text table; the
 * error report; the end (JSON, table, exit code). */
int mb__sttest_build_model(const struct ctx *c, struct mb_stortable **out);
void mb__sttest_print_table(struct ctx *c, const struct mb_stortable *model);
void mb__sttest_report_error(const struct ctx *c);
int mb__sttest_finish(const struct ctx *c, const struct mb_stortable *model, json_t *extra,
		      bool pass, bool runtime_error);

#endif
