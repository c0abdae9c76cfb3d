/* test_crash.c: crash recovery under SIGKILL.
 *
 * A forked writer opens a storage group with two databases and commits
 * numbered transactions from two threads (one database each; one thread
 * commits synchronously, the other asynchronously with a callback), and
 * reports each transaction on a pipe only once its commit is durable.
 * Transaction i of a database puts n:i (a value of 100 B .. 40 KB, so long
 * values and overflow chains are involved), m:i, last=i, and deletes
 * n:(i-50) and m:(i-50), so the live set stays small and pages get freed.  The parent SIGKILLs the
 * writer after a random delay, at least MB_CRASH_ROUNDS (default 50) times; after each kill it
 * reopens the group (recovery) and checks that every reported transaction is present, that the
 * state is exactly that of transactions 1..last (none half-applied), and that the integrity check
 * passes.  Checkpoints are made small so segment removal and checkpoints are also interrupted. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "dbtest.h"

#define NDB 2
static int report_fd = -1;

static size_t vlen_of(uint32_t i) { return i % 10 == 0 ? 40000 : 100 + i % 500; }

static size_t nkey(uint8_t *k, char c, uint32_t i)
{
	k[0] = (uint8_t)c;
	mb_key_u32(k + 1, i);
	return 5;
}

static struct mb_sg *open_group(const char *dir)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.create = true;
	o.cache_mb = 4;
	o.checkpoint_bytes = 2u << 20;
	struct mb_sg *sg = NULL;
	int r = mb_sg_open(&o, &sg);
	if (r < 0) {
		fprintf(stderr, "open %s: %s\n", dir, mb_strerror(r));
		return NULL;
	}
	return sg;
}

static uint32_t read_last(struct mb_tree *t)
{
	struct mb_val v = MB_VAL_INIT;
	uint32_t last = 0;
	if (mb_tree_get(t, "last", 4, &v) == 0 && v.len == 4)
		last = mb_key_get_u32(v.data);
	mb_val_free(&v);
	return last;
}

/* ------------------------------ writer -------------------------------- */

struct wr {
	struct mb_sg *sg;
	int idx;
	bool async;
};

static void report(int idx, uint32_t i)
{
	uint64_t m = (uint64_t)idx << 32 | i;
	if (write(report_fd, &m, sizeof(m)) != sizeof(m))
		_exit(9);
}

struct acb {
	int idx;
	uint32_t i;
};

/* at most MAX_INFLIGHT async commits outstanding, like a bounded reply queue */
#define MAX_INFLIGHT 16
static pthread_mutex_t inflight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t inflight_cond = PTHREAD_COND_INITIALIZER;
static int inflight;

static void async_done(void *arg, int status)
{
	struct acb *a = arg;
	if (status == 0)
		report(a->idx, a->i);
	else
		_exit(8);
	free(a);
	pthread_mutex_lock(&inflight_lock);
	inflight--;
	pthread_cond_signal(&inflight_cond);
	pthread_mutex_unlock(&inflight_lock);
}

static void *writer_thread(void *arg)
{
	struct wr *w = arg;
	char name[32];
	snprintf(name, sizeof(name), "db%02d.mdb", w->idx + 1);
	struct mb_db *db;
	struct mb_tree *t;
	if (mb_db_open(w->sg, name, w->idx ? 8192 : 4096, MB_DB_CREATE, &db) < 0)
		_exit(3);
	if (mb_db_begin(db) < 0 || mb_tree_open(db, "t", MB_TREE_CREATE, &t) < 0 ||
	    mb_db_commit(db) < 0)
		_exit(4);
	uint32_t i = read_last(t) + 1;
	uint8_t *buf = malloc(40000);
	for (;; i++) {
		uint8_t k[8], lv[4];
		size_t kl;
		if (mb_db_begin(db) < 0)
			_exit(5);
		dbt_fill(buf, vlen_of(i), i, (uint64_t)w->idx);
		kl = nkey(k, 'n', i);
		int r = mb_tree_put(t, k, kl, buf, vlen_of(i), 0);
		kl = nkey(k, 'm', i);
		r = r ? r : mb_tree_put(t, k, kl, &i, sizeof(i), 0);
		mb_key_u32(lv, i);
		r = r ? r : mb_tree_put(t, "last", 4, lv, 4, 0);
		if (i > 50) {
			kl = nkey(k, 'n', i - 50);
			r = r ? r : mb_tree_del(t, k, kl);
			kl = nkey(k, 'm', i - 50);
			r = r ? r : mb_tree_del(t, k, kl);
		}
		if (r < 0) {
			fprintf(stderr, "writer: %s: %s\n", mb_strerror(r), mb_db_errmsg(db));
			_exit(6);
		}
		if (w->async) {
			pthread_mutex_lock(&inflight_lock);
			while (inflight >= MAX_INFLIGHT)
				pthread_cond_wait(&inflight_cond, &inflight_lock);
			inflight++;
			pthread_mutex_unlock(&inflight_lock);
			struct acb *a = malloc(sizeof(*a));
			a->idx = w->idx;
			a->i = i;
			if (mb_db_commit_async(db, async_done, a) < 0)
				_exit(7);
		} else {
			if (mb_db_commit(db) < 0)
				_exit(7);
			report(w->idx, i);
		}
	}
	return NULL;
}

static void run_writer(const char *dir)
{
	struct mb_sg *sg = open_group(dir);
	if (!sg)
		_exit(2);
	pthread_t th[NDB];
	struct wr w[NDB];
	for (int d = 0; d < NDB; d++) {
		w[d] = (struct wr){sg, d, d == 1};
		pthread_create(&th[d], NULL, writer_thread, &w[d]);
	}
	for (int d = 0; d < NDB; d++)
		pthread_join(th[d], NULL);
	_exit(0);
}

/* ------------------------------ checker ------------------------------- */

static void verify_db(struct mb_sg *sg, int idx, uint32_t reported, uint8_t *buf)
{
	char name[32];
	snprintf(name, sizeof(name), "db%02d.mdb", idx + 1);
	struct mb_db *db;
	int r = mb_db_open(sg, name, 0, 0, &db);
	if (r == MB_ENOTFOUND) {
		assert_int_equal(reported, 0);
		return;
	}
	assert_int_equal(r, 0);
	struct mb_tree *t;
	r = mb_tree_open(db, "t", 0, &t);
	if (r == MB_ENOTFOUND) {
		assert_int_equal(reported, 0);
		mb_db_close(db);
		return;
	}
	assert_int_equal(r, 0);
	uint32_t last = read_last(t);
	if (last < reported)
		fprintf(stderr, "db %d: last %u < reported %u\n", idx, last, reported);
	assert_true(last >= reported);
	struct mb_val v = MB_VAL_INIT;
	/* exactly n:i and m:i for last-50 < i <= last, and "last" */
	uint32_t lo = last > 50 ? last - 50 : 0;
	for (uint32_t i = lo + 1; i <= last; i++) {
		uint8_t k[8];
		size_t kl = nkey(k, 'n', i);
		r = mb_tree_get(t, k, kl, &v);
		if (r)
			fprintf(stderr, "db %d: n:%u: %s (last %u)\n", idx, i, mb_strerror(r),
				last);
		assert_int_equal(r, 0);
		assert_int_equal(v.len, vlen_of(i));
		dbt_fill(buf, v.len, i, (uint64_t)idx);
		assert_memory_equal(v.data, buf, v.len);
		kl = nkey(k, 'm', i);
		assert_int_equal(mb_tree_get(t, k, kl, &v), 0);
		assert_int_equal(v.len, 4);
	}
	struct mb_cursor *c;
	assert_int_equal(mb_cursor_open(t, &c), 0);
	uint32_t count = 0;
	for (r = mb_cursor_first(c); r == 0; r = mb_cursor_next(c)) {
		const void *key;
		size_t kl;
		mb_cursor_key(c, &key, &kl);
		count++;
		if (kl == 5) {
			uint32_t i = mb_key_get_u32((const uint8_t *)key + 1);
			if (!(i > lo && i <= last))
				fprintf(stderr, "db %d: unexpected %c:%u (last %u)\n", idx,
					*(const char *)key, i, last);
			assert_true(i > lo && i <= last);
		}
	}
	assert_int_equal(r, MB_ENOTFOUND);
	assert_int_equal(count, 2 * (last - lo) + (last ? 1 : 0));
	mb_cursor_close(c);
	mb_val_free(&v);
	assert_int_equal(mb_db_close(db), 0);
}

/* The check passes and covers every database the writers created (a slow
 * run, e.g. under valgrind, can be killed before a writer created its own). */
static void check_group(const char *dir)
{
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	int r = mb_db_check_dir(dir, NULL, 8, NULL, NULL, &rep);
	if (r != 0)
		fprintf(stderr, "check: %s: %s\n", mb_strerror(r), rep.first_problem);
	assert_int_equal(r, 0);
	int exist = 0;
	for (int d = 0; d < NDB; d++) {
		char path[4200];
		struct stat sb;
		snprintf(path, sizeof(path), "%s/db%02d.mdb", dir, d + 1);
		exist += stat(path, &sb) == 0;
	}
	assert_int_equal(rep.databases, exist);
}

static void test_crash(void **state)
{
	char *dir = dbt_tmpdir();
	const char *e = getenv("MB_CRASH_ROUNDS");
	int rounds = e ? atoi(e) : 50;
	uint32_t reported[NDB] = {0};
	uint8_t *buf = malloc(40000);
	uint64_t seed = (uint64_t)time(NULL);
	printf("# seed %llu\n", (unsigned long long)seed);
	uint64_t recovered = 0;
	for (int round = 0; round < rounds; round++) {
		int pfd[2];
		assert_int_equal(pipe(pfd), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(pfd[0]);
			report_fd = pfd[1];
			run_writer(dir);
		}
		close(pfd[1]);
		struct timespec ts = {0, (long)(20 + dbt_rand(&seed) % 150) * 1000000L};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		assert_true(WIFSIGNALED(status)); /* it did not exit by itself (an error) */
		uint64_t m;
		while (read(pfd[0], &m, sizeof(m)) == sizeof(m)) {
			int idx = (int)(m >> 32);
			uint32_t i = (uint32_t)m;
			assert_true(idx >= 0 && idx < NDB);
			if (i > reported[idx])
				reported[idx] = i;
		}
		close(pfd[0]);
		struct mb_sg *sg = open_group(dir);
		assert_non_null(sg);
		struct mb_sg_stats st;
		mb_sg_stats_get(sg, &st);
		recovered += st.recovered_records;
		for (int d = 0; d < NDB; d++)
			verify_db(sg, d, reported[d], buf);
		assert_int_equal(mb_sg_close(sg), 0);
		if (round % 10 == 9 || round == rounds - 1)
			check_group(dir);
	}
	printf("# %d kills; reported %u and %u transactions; %llu log records replayed\n", rounds,
	       reported[0], reported[1], (unsigned long long)recovered);
	assert_true(reported[0] > 0 && reported[1] > 0);
	free(buf);
	dbt_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
