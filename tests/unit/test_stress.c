/* test_stress.c: unit tests of the storage test (src/stress): the workload
 * generator's mix ratios, the latency accounting, the pass/fail verdict,
 * the tuning-window check, the auto-tune stopping rule, and failing I/O:
 * an EIO injected through the engine's fault-injecting I/O shim, and a
 * corrupted page, each fail the run with the file and offset.
 * Files go to a mktemp directory under $TMPDIR (or /tmp), removed at the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "db/db.h"
#include "db/io.h"
#include "stress/acct.h"
#include "stress/iomode.h"
#include "stress/runner.h"
#include "stress/txnmode.h"
#include "stress/workload.h"

static const struct mb_stress_mix jet = {17, 68, 5, 10, 80, 60};

/* ---- workload generator ---- */

static void test_mix_ratios(void **state)
{
	(void)state;
	struct mb_stress_gen *g;
	assert_int_equal(mb_stress_gen_create(&jet, false, 4, 100, 1000, 42, &g), 0);
	const int n = 200000;
	int count[MB_SOP_COUNT] = {0}, lazy = 0, db[4] = {0};
	for (int i = 0; i < n; i++) {
		struct mb_stress_step s;
		mb_stress_gen_next(g, &s);
		assert_true(s.op < MB_SOP_COUNT);
		assert_true(s.target >= 100 && s.target < 1100);
		assert_true(s.db < 4);
		count[s.op]++;
		lazy += s.lazy;
		db[s.db]++;
	}
	const double want[MB_SOP_COUNT] = {17, 68, 5, 10};
	for (int k = 0; k < MB_SOP_COUNT; k++)
		assert_true(fabs(100.0 * count[k] / n - want[k]) < 0.5);
	assert_true(fabs(100.0 * lazy / n - 80.0) < 0.5);
	for (int k = 0; k < 4; k++)
		assert_true(fabs(db[k] / (double)n - 0.25) < 0.01);
	mb_stress_gen_destroy(g);
}

static void test_io_ratio_and_determinism(void **state)
{
	(void)state;
	struct mb_stress_gen *a, *b;
	assert_int_equal(mb_stress_gen_create(&jet, true, 2, 0, 50, 7, &a), 0);
	assert_int_equal(mb_stress_gen_create(&jet, true, 2, 0, 50, 7, &b), 0);
	mb_stress_gen_pin_db(a, 1);
	mb_stress_gen_pin_db(b, 1);
	int reads = 0;
	const int n = 100000;
	for (int i = 0; i < n; i++) {
		struct mb_stress_step x, y;
		mb_stress_gen_next(a, &x);
		mb_stress_gen_next(b, &y);
		assert_int_equal(x.op, y.op);
		assert_int_equal(x.target, y.target);
		assert_int_equal(x.db, 1);
		assert_true(x.op == MB_SOP_READ || x.op == MB_SOP_WRITE);
		reads += x.op == MB_SOP_READ;
	}
	assert_true(fabs(100.0 * reads / n - 60.0) < 0.5);
	mb_stress_gen_destroy(a);
	mb_stress_gen_destroy(b);
}

static void test_mix_rejected(void **state)
{
	(void)state;
	struct mb_stress_mix bad = jet;
	bad.seek_pct = 20; /* sums to 110 */
	struct mb_stress_gen *g = NULL;
	char why[128];
	assert_int_equal(mb_stress_mix_check(&bad, false, why, sizeof(why)), MB_EINVAL);
	assert_non_null(strstr(why, "110"));
	assert_int_equal(mb_stress_gen_create(&bad, false, 1, 0, 10, 1, &g), MB_EINVAL);
	assert_null(g);
	bad = jet;
	bad.read_pct = 101;
	assert_int_equal(mb_stress_mix_check(&bad, true, NULL, 0), MB_EINVAL);
	assert_int_equal(mb_stress_mix_check(&jet, true, NULL, 0), 0);
}

/* ---- latency accounting ---- */

struct rec_arg {
	struct mb_stress_acct *a;
	int base;
};

static void *recorder(void *p)
{
	struct rec_arg *r = p;
	struct mb_stress_slot *s;
	assert_int_equal(mb_stress_acct_slot(r->a, &s), 0);
	/* reads of 1..1000 us (+base), writes of 2 ms, log writes of 500 us */
	for (int i = 1; i <= 1000; i++) {
		mb_stress_slot_record(s, MB_XFER_DB_READ, (uint64_t)(i + r->base) * 1000, 32768);
		if (i % 2 == 0)
			mb_stress_slot_record(s, MB_XFER_DB_WRITE, 2000000, 32768);
		if (i % 10 == 0)
			mb_stress_slot_record(s, MB_XFER_LOG_WRITE, 500000, 4096);
	}
	mb_stress_slot_txn(s);
	return NULL;
}

static void test_accounting(void **state)
{
	(void)state;
	struct mb_stress_acct *a;
	struct mb_stress_window *w;
	assert_int_equal(mb_stress_acct_create(&a), 0);
	assert_int_equal(mb_stress_window_create(&w), 0);
	pthread_t t[2];
	struct rec_arg ra[2] = {{a, 0}, {a, 1000}};
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, recorder, &ra[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	mb_stress_acct_drain(a, w);
	struct mb_stress_figures f;
	mb_stress_window_figures(w, 2.0, 2, &f);
	/* 2000 reads (1..2000 us), 1000 writes, 200 log writes, over 2 s */
	assert_int_equal(f.db_read.count, 2000);
	assert_int_equal(f.db_write.count, 1000);
	assert_int_equal(f.log_write.count, 200);
	assert_true(fabs(f.db_read_iops - 1000.0) < 1e-9);
	assert_true(fabs(f.db_write_iops - 500.0) < 1e-9);
	assert_true(fabs(f.log_write_iops - 100.0) < 1e-9);
	assert_true(fabs(f.iops - 1600.0) < 1e-9);
	assert_true(fabs(f.db_read.avg - 1.0005) < 1e-9); /* exact mean: 1000.5 us */
	assert_true(fabs(f.db_read.max - 2.0) < 1e-9);
	assert_true(fabs(f.db_read.p95 - 1.9) < 1.9 * 0.011);
	assert_true(fabs(f.db_read.p99 - 1.98) < 1.98 * 0.011);
	assert_true(fabs(f.db_write.avg - 2.0) < 1e-9);
	assert_true(fabs(f.log_write.avg - 0.5) < 1e-9);
	assert_true(fabs(f.db_read_bytes_s - 1000.0 * 32768) < 1e-6);
	assert_true(fabs(f.log_write_bytes_s - 100.0 * 4096) < 1e-6);
	assert_int_equal(f.transactions, 2);
	assert_int_equal(f.errors, 0);
	/* draining moved everything: a second drain adds nothing */
	struct mb_stress_window *w2;
	assert_int_equal(mb_stress_window_create(&w2), 0);
	mb_stress_acct_drain(a, w2);
	assert_int_equal(mb_stress_window_count(w2, MB_XFER_DB_READ), 0);
	/* merging windows is exact */
	mb_stress_window_merge(w2, w);
	mb_stress_window_merge(w2, w);
	struct mb_stress_figures g;
	mb_stress_window_figures(w2, 4.0, 2, &g);
	assert_int_equal(g.db_read.count, 4000);
	assert_true(fabs(g.db_read.avg - f.db_read.avg) < 1e-9);
	assert_true(fabs(g.iops - f.iops) < 1e-9);
	/* an empty window has n/a latencies */
	mb_stress_window_reset(w2);
	mb_stress_window_figures(w2, 1.0, 1, &g);
	assert_int_equal(g.db_read.count, 0);
	assert_true(g.iops == 0.0);
	/* errors: the first keeps its file and offset */
	struct mb_stress_slot *s;
	assert_int_equal(mb_stress_acct_slot(a, &s), 0);
	assert_false(mb_stress_acct_first_error(a, NULL, 0, NULL, 0, NULL));
	mb_stress_slot_error(s, "/x/db01.dat", 65536, MB_EIO, "database read failed");
	mb_stress_slot_error(s, "/x/db02.dat", 4096, MB_ECORRUPT, "page checksum mismatch");
	char msg[256], file[256];
	uint64_t off = 0;
	assert_true(mb_stress_acct_first_error(a, msg, sizeof(msg), file, sizeof(file), &off));
	assert_string_equal(file, "/x/db01.dat");
	assert_int_equal(off, 65536);
	assert_non_null(strstr(msg, "MB_EIO"));
	assert_int_equal(mb_stress_acct_errors(a), 2);
	mb_stress_window_reset(w);
	mb_stress_acct_drain(a, w);
	mb_stress_window_figures(w, 1.0, 1, &g);
	assert_int_equal(g.errors, 2);
	mb_stress_window_destroy(w);
	mb_stress_window_destroy(w2);
	mb_stress_acct_destroy(a);
}

/* ---- pass/fail ---- */

static struct mb_stress_figures figs(double rd_avg, double log_avg)
{
	struct mb_stress_figures f;
	memset(&f, 0, sizeof(f));
	f.db_read.count = 100;
	f.db_read.avg = rd_avg;
	f.log_write.count = 10;
	f.log_write.avg = log_avg;
	f.db_read_iops = 100;
	f.log_write_iops = 10;
	f.iops = 110;
	return f;
}

static void test_verdict(void **state)
{
	(void)state;
	struct mb_stress_limits lim = {{MB_CMP_LT, 20.0}, {MB_CMP_LT, 10.0}};
	char why[256];
	struct mb_stress_figures f = figs(1.2, 0.9);
	assert_true(mb_stress_verdict(&f, &lim, why, sizeof(why)));
	assert_string_equal(why, "");
	f = figs(20.0, 0.9); /* the limit itself fails: strictly below passes */
	assert_false(mb_stress_verdict(&f, &lim, why, sizeof(why)));
	assert_non_null(strstr(why, "read"));
	f = figs(19.99, 10.5);
	assert_false(mb_stress_verdict(&f, &lim, why, sizeof(why)));
	assert_non_null(strstr(why, "log write"));
	f = figs(1, 1);
	f.errors = 1;
	assert_false(mb_stress_verdict(&f, &lim, why, sizeof(why)));
	assert_non_null(strstr(why, "error"));
	/* an unmeasured latency has no verdict, but no I/O at all fails */
	f = figs(1, 50);
	f.log_write.count = 0;
	assert_true(mb_stress_verdict(&f, &lim, NULL, 0));
	memset(&f, 0, sizeof(f));
	assert_false(mb_stress_verdict(&f, &lim, why, sizeof(why)));
	/* the command line or scenario limit is what counts */
	struct mb_stress_limits tight = {{MB_CMP_LT, 1.0}, {MB_CMP_LT, 10.0}};
	f = figs(1.2, 0.9);
	assert_false(mb_stress_verdict(&f, &tight, NULL, 0));
	/* any comparison of the threshold module: "<=" passes the limit itself,
	 * none never fails */
	struct mb_stress_limits le = {{MB_CMP_LE, 20.0}, {MB_CMP_NONE, 0}};
	f = figs(20.0, 500);
	assert_true(mb_stress_verdict(&f, &le, why, sizeof(why)));
	f = figs(20.01, 0.9);
	assert_false(mb_stress_verdict(&f, &le, why, sizeof(why)));
	assert_non_null(strstr(why, "<= 20"));
}

static void test_tuning_window(void **state)
{
	(void)state;
	struct mb_stress_figures f;
	memset(&f, 0, sizeof(f));
	double rw, dl;
	char note[256];
	f.db_read_iops = 600;
	f.db_write_iops = 350; /* 1.71:1 */
	f.log_write_iops = 95; /* 10:1 */
	assert_true(mb_stress_window_check(&f, &rw, &dl, note, sizeof(note)));
	assert_string_equal(note, "");
	assert_true(fabs(rw - 600.0 / 350) < 1e-9);
	assert_true(fabs(dl - 10.0) < 1e-9);
	f.db_write_iops = 100; /* 6:1 */
	f.log_write_iops = 70; /* 10:1 */
	assert_false(mb_stress_window_check(&f, &rw, &dl, note, sizeof(note)));
	assert_non_null(strstr(note, "reads:writes"));
	assert_null(strstr(note, "database:log"));
	f.db_write_iops = 350;
	f.log_write_iops = 500; /* 1.9:1 */
	assert_false(mb_stress_window_check(&f, NULL, NULL, note, sizeof(note)));
	assert_non_null(strstr(note, "database:log"));
	f.log_write_iops = 0;
	assert_false(mb_stress_window_check(&f, &rw, &dl, note, sizeof(note)));
	assert_true(dl < 0);
	/* both edges are inside */
	f.db_read_iops = 300;
	f.db_write_iops = 200;
	f.log_write_iops = 62.5; /* 8:1 */
	assert_true(mb_stress_window_check(&f, NULL, NULL, NULL, 0));
}

/* ---- auto-tune ---- */

static void test_tune_ladder(void **state)
{
	(void)state;
	const int want[] = {1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64};
	int cur = 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cur = mb_stress_tune_ladder(cur);
		assert_int_equal(cur, want[i]);
	}
	assert_int_equal(mb_stress_tune_ladder(5), 8);
}

static void test_tune_rule(void **state)
{
	(void)state;
	int next, best;
	/* nothing yet: start at 1 */
	assert_true(mb_stress_tune_next(NULL, 0, 64, 0.05, &next, &best));
	assert_int_equal(next, 1);
	assert_int_equal(best, -1);
	/* growing and passing: go on up the ladder */
	struct mb_tune_step s[8] = {{1, 1000, true}, {2, 1900, true}, {4, 3500, true}};
	assert_true(mb_stress_tune_next(s, 3, 64, 0.05, &next, &best));
	assert_int_equal(next, 6);
	assert_int_equal(best, 2);
	/* IOPS stop growing (+2%): stop, and the knee is the smaller count */
	s[3] = (struct mb_tune_step){6, 3570, true};
	assert_false(mb_stress_tune_next(s, 4, 64, 0.05, &next, &best));
	assert_int_equal(s[best].threads, 4);
	/* IOPS fall: stop, best stays at the peak */
	s[3] = (struct mb_tune_step){6, 3000, true};
	assert_false(mb_stress_tune_next(s, 4, 64, 0.05, &next, &best));
	assert_int_equal(s[best].threads, 4);
	/* a threshold fails: stop at once, best is the last passing step */
	s[3] = (struct mb_tune_step){6, 5000, false};
	assert_false(mb_stress_tune_next(s, 4, 64, 0.05, &next, &best));
	assert_int_equal(s[best].threads, 4);
	/* the first step fails: no best */
	struct mb_tune_step f1[1] = {{1, 100, false}};
	assert_false(mb_stress_tune_next(f1, 1, 64, 0.05, &next, &best));
	assert_int_equal(best, -1);
	/* the ceiling stops the climb */
	struct mb_tune_step c[2] = {{4, 100, true}, {6, 200, true}};
	assert_false(mb_stress_tune_next(c, 2, 7, 0.05, &next, &best));
	assert_int_equal(c[best].threads, 6);
	assert_true(mb_stress_tune_next(c, 2, 8, 0.05, &next, &best));
	assert_int_equal(next, 8);
}

/* ---- failing I/O through the engine's fault-injecting shim ---- */

static char tmpdir[512];

static int setup_dir(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/mbstressXXXXXX", t && t[0] ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* One measurement phase of a mode: its accountant, result window and
 * worker (transactions mode: the accountant reads the engine's counters). */
struct phase {
	struct mb_stress_acct *a;
	struct mb_stress_window *w;
	struct mb_stress_worker wk;
	double secs;
	struct mb_stress_figures f;
};

static void phase_init(struct phase *p, struct mb_iomode *io, struct mb_txnmode *tx)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(mb_stress_acct_create(&p->a), 0);
	assert_int_equal(mb_stress_window_create(&p->w), 0);
	if (io) {
		mb_iomode_worker(io, &p->wk);
	} else {
		assert_int_equal(mb_txnmode_attach(tx, p->a), 0);
		mb_txnmode_worker(tx, &p->wk);
	}
}

/* Run it; p->f gets the figures (of at least 1 s when it ended at once). */
static int phase_run(struct phase *p, int threads, double warmup, double duration)
{
	int rc = mb_stress_run_phase(&p->wk, p->a, threads, warmup, duration, NULL, NULL, p->w,
				     &p->secs);
	mb_stress_window_figures(p->w, p->secs > 0 ? p->secs : 1, threads, &p->f);
	return rc;
}

static void phase_fini(struct phase *p)
{
	mb_stress_window_destroy(p->w);
	mb_stress_acct_destroy(p->a);
}

/* The run failed on the fault: the first error names a file containing
 * `in_file`, an offset on a page boundary below off_end, and `in_what`. */
static void assert_first_error(struct phase *p, struct mb_fault *fault, const char *in_file,
			       uint64_t off_end, const char *in_what)
{
	assert_true(mb_fault_fired(fault) >= 1);
	assert_true(mb_stress_acct_errors(p->a) >= 1);
	char what[700], file[700];
	uint64_t off = UINT64_MAX;
	assert_true(mb_stress_acct_first_error(p->a, what, sizeof(what), file, sizeof(file), &off));
	assert_non_null(strstr(file, in_file));
	assert_true(off < off_end && off % 8192 == 0);
	assert_non_null(strstr(what, in_what));
}

static void io_cfg(struct mb_iomode_cfg *c, char *dir, size_t len, const struct mb_vfs *vfs)
{
	snprintf(dir, len, "%s/stress/io", tmpdir);
	memset(c, 0, sizeof(*c));
	c->db_dir = dir;
	c->log_dir = dir;
	c->page_size = 8192;
	c->databases = 2;
	c->pages_per_db = 256;
	c->read_pct = 60;
	c->vfs = vfs;
}

static void test_iomode_runs_and_reuses(void **state)
{
	(void)state;
	char dir[600], msg[512];
	struct mb_iomode_cfg c;
	io_cfg(&c, dir, sizeof(dir), NULL);
	struct mb_iomode *m;
	assert_int_equal(mb_iomode_open(&c, &m, msg, sizeof(msg)), 0);
	assert_false(mb_iomode_reused(m));
	struct phase p;
	phase_init(&p, m, NULL);
	assert_int_equal(phase_run(&p, 2, 0.2, 0.5), 0);
	assert_true(p.secs > 0.4);
	assert_true(p.f.db_read.count > 0 && p.f.db_write.count > 0 && p.f.log_write.count > 0);
	assert_int_equal(p.f.errors, 0);
	/* writes kept every page valid */
	struct mb_stress_slot *s;
	uint64_t bytes;
	assert_int_equal(mb_stress_acct_slot(p.a, &s), 0);
	assert_int_equal(mb_iomode_verify_all(m, s, &bytes), 0);
	assert_int_equal(bytes, 2 * 256 * 8192);
	assert_int_equal(mb_stress_acct_errors(p.a), 0);
	mb_iomode_close(m);
	/* the second open reuses the files */
	assert_int_equal(mb_iomode_open(&c, &m, msg, sizeof(msg)), 0);
	assert_true(mb_iomode_reused(m));
	mb_iomode_close(m);
	/* another geometry re-creates them */
	c.pages_per_db = 128;
	assert_int_equal(mb_iomode_open(&c, &m, msg, sizeof(msg)), 0);
	assert_false(mb_iomode_reused(m));
	mb_iomode_close(m);
	phase_fini(&p);
}

static void test_injected_eio_fails_run(void **state)
{
	(void)state;
	struct mb_fault *fault;
	assert_int_equal(mb_fault_create(NULL, &fault), 0);
	char dir[600], msg[512];
	struct mb_iomode_cfg c;
	io_cfg(&c, dir, sizeof(dir), mb_fault_vfs(fault));
	struct mb_iomode *m;
	assert_int_equal(mb_iomode_open(&c, &m, msg, sizeof(msg)), 0);
	/* the 50th database read from now fails with EIO */
	struct mb_fault_rule rule = {MB_FAULT_EIO, MB_FAULT_ON_READ, MB_FILE_DB, 50, false, 0, 0};
	mb_fault_arm(fault, &rule);
	struct phase p;
	phase_init(&p, m, NULL);
	uint64_t t0 = mb_stress_now_ns();
	phase_run(&p, 2, 0, 120.0);
	/* the phase ended early, on the error, not after its 120 s */
	assert_true(mb_stress_now_ns() - t0 < 100000000000ULL);
	assert_first_error(&p, fault, "/stress/io/db0", 256 * 8192, "read");
	/* and the verdict fails */
	p.f.errors = mb_stress_acct_errors(p.a);
	struct mb_stress_limits lim = {{MB_CMP_LT, 20}, {MB_CMP_LT, 10}};
	assert_false(mb_stress_verdict(&p.f, &lim, NULL, 0));
	mb_fault_disarm(fault);
	mb_iomode_close(m);
	phase_fini(&p);
	mb_fault_destroy(fault);
}

static void test_corrupt_page_found(void **state)
{
	(void)state;
	char dir[600], msg[512], path[700];
	struct mb_iomode_cfg c;
	io_cfg(&c, dir, sizeof(dir), NULL);
	struct mb_iomode *m;
	assert_int_equal(mb_iomode_open(&c, &m, msg, sizeof(msg)), 0);
	mb_iomode_close(m);
	/* flip bytes of page 5 of the second file behind the test's back */
	snprintf(path, sizeof(path), "%s/db02.dat", dir);
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "garbage!", 8, 5 * 8192 + 100), 8);
	fsync(fd);
	close(fd);
	assert_int_equal(mb_iomode_open(&c, &m, msg, sizeof(msg)), 0);
	struct mb_stress_acct *a;
	struct mb_stress_slot *s;
	assert_int_equal(mb_stress_acct_create(&a), 0);
	assert_int_equal(mb_stress_acct_slot(a, &s), 0);
	uint64_t bytes;
	assert_int_equal(mb_iomode_verify_all(m, s, &bytes), MB_ECORRUPT);
	char what[256], file[700];
	uint64_t off;
	assert_true(mb_stress_acct_first_error(a, what, sizeof(what), file, sizeof(file), &off));
	assert_string_equal(file, path);
	assert_int_equal(off, 5 * 8192);
	assert_non_null(strstr(what, "checksum"));
	assert_int_equal(mb_stress_acct_errors(a), 1);
	mb_iomode_close(m);
	mb_stress_acct_destroy(a);
}

/* The page format round-trips and every field is checked; the page CRC is
 * the engine's (mb_page_crc: CRC-32 of bytes 4..size, the zlib polynomial,
 * so the check value of "123456789" is 0xcbf43926). */
static void test_page_format(void **state)
{
	(void)state;
	const uint8_t vec[] = "crc!123456789";
	assert_int_equal(mb_page_crc(vec, 13), 0xcbf43926u);
	unsigned char *p = malloc(4096);
	assert_non_null(p);
	mb_iomode_page_fill(p, 4096, 3, 77, 12345);
	uint32_t stored;
	memcpy(&stored, p, 4);
	assert_int_equal(stored, mb_page_crc(p, 4096));
	assert_int_equal(mb_iomode_page_check(p, 4096, 3, 77, NULL, 0), 0);
	assert_int_equal(mb_iomode_page_check(p, 4096, 3, 78, NULL, 0), MB_ECORRUPT);
	assert_int_equal(mb_iomode_page_check(p, 4096, 4, 77, NULL, 0), MB_ECORRUPT);
	unsigned char *q = malloc(4096);
	assert_non_null(q);
	mb_iomode_page_fill(q, 4096, 3, 78, 12346);
	assert_true(memcmp(p + 32, q + 32, 4096 - 32) != 0); /* pages differ */
	p[2000] ^= 1;
	char why[96];
	assert_int_equal(mb_iomode_page_check(p, 4096, 3, 77, why, sizeof(why)), MB_ECORRUPT);
	assert_non_null(strstr(why, "checksum"));
	free(p);
	free(q);
}

/* ---- transactions mode over the real engine ---- */

static void txn_cfg(struct mb_txnmode_cfg *c, char *dir, size_t len, const struct mb_vfs *vfs)
{
	snprintf(dir, len, "%s/stress", tmpdir);
	memset(c, 0, sizeof(*c));
	c->dir = dir;
	c->page_size = 8192;
	c->databases = 2;
	c->db_bytes = 2u << 20;
	c->cache_mb = 2;
	c->mix = jet;
	c->vfs = vfs;
}

static void test_txnmode_runs(void **state)
{
	(void)state;
	char dir[600], msg[1024];
	struct mb_txnmode_cfg c;
	txn_cfg(&c, dir, sizeof(dir), NULL);
	struct mb_txnmode *m;
	int rc = mb_txnmode_open(&c, &m, msg, sizeof(msg));
	if (rc)
		fprintf(stderr, "%s\n", msg);
	assert_int_equal(rc, 0);
	struct phase p;
	phase_init(&p, NULL, m);
	assert_int_equal(phase_run(&p, 2, 0.3, 1.0), 0);
	assert_true(p.f.transactions > 0);
	assert_true(p.f.log_write.count > 0);
	assert_true(p.f.db_read.count + p.f.db_write.count > 0);
	assert_int_equal(p.f.errors, 0);
	assert_int_equal(mb_stress_acct_errors(p.a), 0);
	/* the engine's checksum pass finds the databases clean */
	struct mb_stress_slot *s;
	uint64_t pages, bytes;
	double secs;
	assert_int_equal(mb_stress_acct_slot(p.a, &s), 0);
	assert_int_equal(mb_txnmode_checksum(m, s, &pages, &bytes, &secs), 0);
	assert_true(pages >= 2 * (2u << 20) / 8192);
	assert_int_equal(mb_txnmode_close(m), 0);
	phase_fini(&p);
	/* reused the second time */
	assert_int_equal(mb_txnmode_open(&c, &m, msg, sizeof(msg)), 0);
	assert_true(mb_txnmode_reused(m));
	assert_int_equal(mb_txnmode_close(m), 0);
}

static void test_txnmode_injected_eio(void **state)
{
	(void)state;
	struct mb_fault *fault;
	assert_int_equal(mb_fault_create(NULL, &fault), 0);
	char dir[600], msg[1024];
	struct mb_txnmode_cfg c;
	txn_cfg(&c, dir, sizeof(dir), mb_fault_vfs(fault));
	struct mb_txnmode *m;
	assert_int_equal(mb_txnmode_open(&c, &m, msg, sizeof(msg)), 0);
	/* every database read from the 20th on fails */
	struct mb_fault_rule rule = {MB_FAULT_EIO, MB_FAULT_ON_READ, MB_FILE_DB, 20, true, 0, 0};
	mb_fault_arm(fault, &rule);
	struct phase p;
	phase_init(&p, NULL, m);
	phase_run(&p, 2, 0, 20.0);
	/* the engine's read of a database page: its file and offset */
	assert_first_error(&p, fault, "/stress/db", UINT64_MAX, "MB_EIO");
	char what[700], file[700];
	uint64_t off;
	assert_true(mb_stress_acct_first_error(p.a, what, sizeof(what), file, sizeof(file), &off));
	assert_non_null(strstr(file, ".mdb"));
	mb_fault_disarm(fault);
	mb_txnmode_close(m);
	phase_fini(&p);
	mb_fault_destroy(fault);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mix_ratios),
	    cmocka_unit_test(test_io_ratio_and_determinism),
	    cmocka_unit_test(test_mix_rejected),
	    cmocka_unit_test(test_accounting),
	    cmocka_unit_test(test_verdict),
	    cmocka_unit_test(test_tuning_window),
	    cmocka_unit_test(test_tune_ladder),
	    cmocka_unit_test(test_tune_rule),
	    cmocka_unit_test(test_page_format),
	    cmocka_unit_test_setup_teardown(test_iomode_runs_and_reuses, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_injected_eio_fails_run, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_corrupt_page_found, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_txnmode_runs, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_txnmode_injected_eio, setup_dir, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
