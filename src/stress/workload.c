/* workload.c: the storage test's pure logic (see workload.h).
 * Invariant: no I/O, no clock, no global state; deterministic per seed. */
#include "stress/workload.h"
#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_stress_gen {
	struct mb_stress_mix mix;
	double cum[MB_SOP_COUNT]; /* cumulative fractions of the transaction mix */
	bool io_mode;
	unsigned dbs;
	bool pinned;
	unsigned pin;
	uint64_t first, count;
	uint64_t rng;
};

static bool pct_ok(double v) { return isfinite(v) && v >= 0.0 && v <= 100.0; }

int mb_stress_mix_check(const struct mb_stress_mix *mix, bool io_mode, char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	if (io_mode) {
		if (!pct_ok(mix->read_pct)) {
			if (why)
				snprintf(why, len, "read_pct %g is not within 0..100",
					 mix->read_pct);
			return MB_EINVAL;
		}
		return 0;
	}
	const double v[] = {mix->insert_pct, mix->replace_pct, mix->delete_pct, mix->seek_pct,
			    mix->lazy_commit_pct};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (!pct_ok(v[i])) {
			if (why)
				snprintf(why, len, "a percentage (%g) is not within 0..100", v[i]);
			return MB_EINVAL;
		}
	}
	double sum = mix->insert_pct + mix->replace_pct + mix->delete_pct + mix->seek_pct;
	if (fabs(sum - 100.0) > 0.01) {
		if (why)
			snprintf(why, len,
				 "insert+replace+delete+seek percentages sum to %g, not 100", sum);
		return MB_EINVAL;
	}
	return 0;
}

int mb_stress_gen_create(const struct mb_stress_mix *mix, bool io_mode, unsigned dbs,
			 uint64_t first, uint64_t count, uint64_t seed, struct mb_stress_gen **out)
{
	*out = NULL;
	if (!mix || dbs == 0 || count == 0 || mb_stress_mix_check(mix, io_mode, NULL, 0))
		return MB_EINVAL;
	struct mb_stress_gen *g = calloc(1, sizeof(*g));
	if (!g)
		return MB_ENOMEM;
	g->mix = *mix;
	g->io_mode = io_mode;
	g->dbs = dbs;
	g->first = first;
	g->count = count;
	g->cum[MB_SOP_INSERT] = mix->insert_pct / 100.0;
	g->cum[MB_SOP_REPLACE] = g->cum[MB_SOP_INSERT] + mix->replace_pct / 100.0;
	g->cum[MB_SOP_DELETE] = g->cum[MB_SOP_REPLACE] + mix->delete_pct / 100.0;
	g->cum[MB_SOP_SEEK] = 2.0; /* catches rounding */
	mb_rng_seed(&g->rng, seed);
	*out = g;
	return 0;
}

void mb_stress_gen_destroy(struct mb_stress_gen *g) { free(g); }

void mb_stress_gen_pin_db(struct mb_stress_gen *g, unsigned db)
{
	g->pinned = true;
	g->pin = db % g->dbs;
}

void mb_stress_gen_next(struct mb_stress_gen *g, struct mb_stress_step *out)
{
	double u = mb_rng_unit(&g->rng);
	if (g->io_mode) {
		out->op = u * 100.0 < g->mix.read_pct ? MB_SOP_READ : MB_SOP_WRITE;
		out->lazy = false;
	} else {
		int op = 0;
		while (op < MB_SOP_SEEK && u >= g->cum[op])
			op++;
		out->op = (enum mb_stress_op)op;
		out->lazy = mb_rng_unit(&g->rng) * 100.0 < g->mix.lazy_commit_pct;
	}
	out->db = g->pinned ? g->pin : (unsigned)mb_rng_below(&g->rng, g->dbs);
	out->target = g->first + mb_rng_below(&g->rng, g->count);
}

bool mb_stress_verdict(const struct mb_stress_figures *f, const struct mb_stress_limits *lim,
		       char *why, size_t len)
{
	char dummy[8];
	if (!why || !len) {
		why = dummy;
		len = sizeof(dummy);
	}
	why[0] = '\0';
	if (f->errors) {
		snprintf(why, len, "%llu I/O error(s) or checksum mismatch(es)",
			 (unsigned long long)f->errors);
		return false;
	}
	if (f->db_read.count + f->db_write.count + f->log_write.count == 0) {
		snprintf(why, len, "no I/O was measured");
		return false;
	}
	char th[48];
	if (mb_threshold_eval(&lim->db_read, f->db_read.count > 0, f->db_read.avg) ==
	    MB_VERDICT_FAIL) {
		mb_threshold_text(&lim->db_read, MB_C_STRESS_READ_MS, th, sizeof(th));
		snprintf(why, len, "database read average %.3f ms is not %s ms", f->db_read.avg,
			 th);
		return false;
	}
	if (mb_threshold_eval(&lim->log_write, f->log_write.count > 0, f->log_write.avg) ==
	    MB_VERDICT_FAIL) {
		mb_threshold_text(&lim->log_write, MB_C_STRESS_LOG_MS, th, sizeof(th));
		snprintf(why, len, "log write average %.3f ms is not %s ms", f->log_write.avg, th);
		return false;
	}
	return true;
}

bool mb_stress_window_check(const struct mb_stress_figures *f, double *rw_ratio,
			    double *dblog_ratio, char *note, size_t len)
{
	double rd = f->db_read_iops, wr = f->db_write_iops, lg = f->log_write_iops;
	double rw = wr > 0 ? rd / wr : -1.0;
	double dl = lg > 0 ? (rd + wr) / lg : -1.0;
	if (rw_ratio)
		*rw_ratio = rw;
	if (dblog_ratio)
		*dblog_ratio = dl;
	bool rw_in = rw >= 1.5 && rw <= 2.0;
	bool dl_in = dl >= 8.0 && dl <= 12.0;
	if (note && len) {
		note[0] = '\0';
		size_t used = 0;
		if (!rw_in) {
			if (rw < 0)
				used += (size_t)snprintf(note, len,
							 "no database writes: reads:writes outside "
							 "the tuning window (3:2 to 2:1)");
			else
				used += (size_t)snprintf(note, len,
							 "database reads:writes %.2f:1 is outside "
							 "the tuning window (1.5:1 to 2:1)",
							 rw);
		}
		if (!dl_in && used < len) {
			const char *sep = used ? "; " : "";
			if (dl < 0)
				snprintf(note + used, len - used,
					 "%sno log writes: database:log transfers outside the "
					 "tuning window (8:1 to 12:1)",
					 sep);
			else
				snprintf(note + used, len - used,
					 "%sdatabase:log transfers %.1f:1 is outside the tuning "
					 "window (8:1 to 12:1)",
					 sep, dl);
		}
	}
	return rw_in && dl_in;
}

int mb_stress_tune_ladder(int cur)
{
	if (cur < 1)
		return 1;
	if (cur < 4)
		return cur * 2;
	/* powers of two step by half; anything else goes to the next power */
	if ((cur & (cur - 1)) == 0)
		return cur + cur / 2;
	int p = 1;
	while (p <= cur)
		p <<= 1;
	return p;
}

static int tune_best(const struct mb_tune_step *steps, int n, double min_gain)
{
	double top = -1.0;
	for (int i = 0; i < n; i++)
		if (steps[i].pass && steps[i].iops > top)
			top = steps[i].iops;
	if (top < 0)
		return -1;
	int best = -1;
	for (int i = 0; i < n; i++) {
		if (!steps[i].pass || steps[i].iops < (1.0 - min_gain) * top)
			continue;
		if (best < 0 || steps[i].threads < steps[best].threads)
			best = i;
	}
	return best;
}

bool mb_stress_tune_next(const struct mb_tune_step *steps, int n, int max_threads, double min_gain,
			 int *next, int *best)
{
	*best = tune_best(steps, n, min_gain);
	*next = 0;
	if (n <= 0) {
		*next = 1;
		return max_threads >= 1;
	}
	const struct mb_tune_step *last = &steps[n - 1];
	if (!last->pass)
		return false;
	/* best passing IOPS before the last step */
	double prev = -1.0;
	for (int i = 0; i < n - 1; i++)
		if (steps[i].pass && steps[i].iops > prev)
			prev = steps[i].iops;
	if (prev >= 0 && last->iops < prev * (1.0 + min_gain))
		return false;
	int nx = mb_stress_tune_ladder(last->threads);
	if (nx > max_threads)
		return false;
	*next = nx;
	return true;
}
