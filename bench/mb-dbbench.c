/* mb-dbbench.c: helper program of the storage engine benchmarks in bench/
 * (not installed, not a test).  Every figure comes from real work through
 * the engine:
 *   fill DIR MB [PAGE]         create DIR/db01.mdb with a tree of 1 MiB
 *                              values until the file holds MB MiB
 *   read DIR THREADS SECONDS CACHE_MB
 *                              random page reads through the database cache
 *                              (pin/unpin), THREADS threads at once
 *   commit DIR COMMITTERS SECONDS
 *                              COMMITTERS threads, one database each in one
 *                              storage group, each committing small
 *                              transactions synchronously
 *   scan DIR CACHE_MB          read every key and value of the filled tree
 *                              through a cursor; report peak RSS
 *   ops DIR N                  N random puts (100-byte values, 100 per
 *                              transaction, async commits), then N random
 *                              gets: B+tree operations per second
 * Output: "key value" lines, one per figure, for the scripts to parse. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "db/db.h"
#include "db/dbint.h"
#include "db/pager.h"

static void die(const char *what, int r)
{
	fprintf(stderr, "mb-dbbench: %s: %s\n", what, mb_strerror(r));
	exit(3);
}

static struct mb_sg *open_sg(const char *dir, unsigned cache_mb)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.create = true;
	o.cache_mb = cache_mb;
	struct mb_sg *sg;
	int r = mb_sg_open(&o, &sg);
	if (r < 0)
		die("open storage group", r);
	return sg;
}

static double now_s(void) { return (double)mb_io_now_ns() / 1e9; }

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

static int cmd_fill(const char *dir, long mb, uint32_t ps)
{
	struct mb_sg *sg = open_sg(dir, 64);
	struct mb_db *db;
	struct mb_tree *t;
	int r = mb_db_open(sg, "db01.mdb", ps, MB_DB_CREATE, &db);
	if (r < 0)
		die("open db", r);
	if ((r = mb_db_begin(db)) < 0 || (r = mb_tree_open(db, "bench", MB_TREE_CREATE, &t)) < 0 ||
	    (r = mb_db_commit(db)) < 0)
		die("create tree", r);
	size_t vlen = 1u << 20;
	uint8_t *v = malloc(vlen);
	for (size_t i = 0; i < vlen; i++)
		v[i] = (uint8_t)(i * 2654435761u >> 13);
	uint64_t total = 0, freep = 0;
	double t0 = now_s();
	for (uint32_t i = 0;; i++) {
		mb_db_pages(db, &total, &freep);
		if (total * ps >= (uint64_t)mb << 20)
			break;
		uint8_t k[4];
		mb_key_u32(k, i);
		v[0] = (uint8_t)i;
		if ((r = mb_db_begin(db)) < 0 || (r = mb_tree_put(t, k, 4, v, vlen, 0)) < 0 ||
		    (r = mb_db_commit(db)) < 0)
			die(mb_db_errmsg(db), r);
	}
	double dt = now_s() - t0;
	mb_db_close(db);
	mb_sg_close(sg);
	printf("fill_pages %llu\nfill_mib %.0f\nfill_seconds %.1f\n", (unsigned long long)total,
	       (double)total * ps / 1048576.0, dt);
	free(v);
	return 0;
}

struct rd {
	struct mb_db *db;
	uint32_t npages;
	double until;
	uint64_t seed, n;
	int err;
};

static void *read_thread(void *arg)
{
	struct rd *r = arg;
	uint64_t s = r->seed;
	while (1) {
		for (int k = 0; k < 64; k++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			uint32_t pg = (uint32_t)(s % r->npages);
			struct frame *f;
			int e = pg_get(r->db, pg, &f);
			if (e < 0) {
				r->err = e;
				return NULL;
			}
			cache_put(f);
			r->n++;
		}
		if (now_s() >= r->until)
			break;
	}
	return NULL;
}

static int cmd_read(const char *dir, int threads, double secs, unsigned cache_mb)
{
	struct mb_sg *sg = open_sg(dir, cache_mb);
	struct mb_db *db;
	int r = mb_db_open(sg, "db01.mdb", 0, 0, &db);
	if (r < 0)
		die("open db01.mdb", r);
	uint64_t total, freep;
	mb_db_pages(db, &total, &freep);
	struct mb_io_stats s0, s1;
	mb_io_stats_get(mb_sg_io(sg), &s0);
	struct mb_cache_stats c0, c1;
	mb_cache_stats_get(mb_sg_cache(sg), &c0);
	pthread_t th[256];
	struct rd rs[256];
	if (threads > 256)
		threads = 256;
	double t0 = now_s();
	for (int i = 0; i < threads; i++) {
		/* each thread its own handle? one db handle is single-threaded for
		 * writes; page reads through pg_get are cache operations, which are
		 * thread-safe, so the threads share it read-only */
		rs[i] = (struct rd){
		    db, (uint32_t)total, t0 + secs, 0x9E3779B97F4A7C15ull * (i + 1), 0, 0};
		pthread_create(&th[i], NULL, read_thread, &rs[i]);
	}
	uint64_t n = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		n += rs[i].n;
		if (rs[i].err)
			die("read", rs[i].err);
	}
	double dt = now_s() - t0;
	mb_io_stats_get(mb_sg_io(sg), &s1);
	mb_cache_stats_get(mb_sg_cache(sg), &c1);
	uint64_t reads = s1.kind[MB_FILE_DB].reads - s0.kind[MB_FILE_DB].reads;
	printf("page_size %u\npages %llu\nthreads %d\nseconds %.2f\n", mb_db_page_size(db),
	       (unsigned long long)total, threads, dt);
	printf(
	    "page_requests_per_s %.0f\ndisk_reads_per_s %.0f\nhit_pct %.1f\nread_mib_per_s %.1f\n",
	    n / dt, reads / dt, 100.0 * (double)(c1.hits - c0.hits) / (double)(n ? n : 1),
	    (double)(s1.kind[MB_FILE_DB].read_bytes - s0.kind[MB_FILE_DB].read_bytes) / dt /
		1048576.0);
	mb_db_close(db);
	mb_sg_close(sg);
	return 0;
}

struct cm {
	struct mb_sg *sg;
	int idx;
	double until;
	uint64_t n;
};

static void *commit_thread(void *arg)
{
	struct cm *c = arg;
	char name[32];
	snprintf(name, sizeof(name), "c%03d.mdb", c->idx);
	struct mb_db *db;
	struct mb_tree *t;
	int r = mb_db_open(c->sg, name, 8192, MB_DB_CREATE, &db);
	if (r < 0)
		die("open", r);
	if ((r = mb_db_begin(db)) < 0 || (r = mb_tree_open(db, "t", MB_TREE_CREATE, &t)) < 0 ||
	    (r = mb_db_commit(db)) < 0)
		die("tree", r);
	uint8_t v[200];
	memset(v, c->idx, sizeof(v));
	for (uint32_t i = 0; now_s() < c->until; i++) {
		uint8_t k[4];
		mb_key_u32(k, i % 5000);
		if ((r = mb_db_begin(db)) < 0 || (r = mb_tree_put(t, k, 4, v, sizeof(v), 0)) < 0 ||
		    (r = mb_db_commit(db)) < 0)
			die("commit", r);
		c->n++;
	}
	mb_db_close(db);
	return NULL;
}

static int cmd_commit(const char *dir, int n, double secs)
{
	struct mb_sg *sg = open_sg(dir, 64);
	pthread_t th[1024];
	struct cm cs[1024];
	if (n > 1024)
		n = 1024;
	struct mb_sg_stats a, b;
	/* warm up: create the databases first so opening is not timed */
	for (int i = 0; i < n; i++) {
		cs[i] = (struct cm){sg, i, 0, 0};
		pthread_create(&th[i], NULL, commit_thread, &cs[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	mb_sg_stats_get(sg, &a);
	struct mb_io_stats i0, i1;
	mb_io_stats_get(mb_sg_io(sg), &i0);
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		cs[i] = (struct cm){sg, i, t0 + secs, 0};
		pthread_create(&th[i], NULL, commit_thread, &cs[i]);
	}
	uint64_t total = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += cs[i].n;
	}
	double dt = now_s() - t0;
	mb_sg_stats_get(sg, &b);
	mb_io_stats_get(mb_sg_io(sg), &i1);
	printf(
	    "db_writes_per_s %.0f\ndb_syncs_per_s %.0f\nlog_syncs_per_s %.0f\ncheckpoints %llu\n",
	    (i1.kind[MB_FILE_DB].writes - i0.kind[MB_FILE_DB].writes) / dt,
	    (i1.kind[MB_FILE_DB].syncs - i0.kind[MB_FILE_DB].syncs) / dt,
	    (i1.kind[MB_FILE_LOG].syncs - i0.kind[MB_FILE_LOG].syncs) / dt,
	    (unsigned long long)(b.checkpoints - a.checkpoints));
	uint64_t writes = b.log_writes - a.log_writes, commits = b.commits - a.commits;
	printf("committers %d\ncommits %llu\ncommits_per_s %.0f\nlog_writes_per_s %.0f\n"
	       "commits_per_log_write %.2f\n",
	       n, (unsigned long long)total, total / dt, writes / dt,
	       writes ? (double)commits / (double)writes : 0.0);
	mb_sg_close(sg);
	return 0;
}

static int cmd_scan(const char *dir, unsigned cache_mb)
{
	struct mb_sg *sg = open_sg(dir, cache_mb);
	struct mb_db *db;
	struct mb_tree *t;
	int r = mb_db_open(sg, "db01.mdb", 0, 0, &db);
	if (r < 0 || (r = mb_tree_open(db, "bench", 0, &t)) < 0)
		die("open", r);
	struct mb_cursor *c;
	mb_cursor_open(t, &c);
	struct mb_val v = MB_VAL_INIT;
	uint64_t bytes = 0, keys = 0;
	long peak = rss_kb();
	double t0 = now_s();
	for (r = mb_cursor_first(c); r == 0; r = mb_cursor_next(c)) {
		if ((r = mb_cursor_value(c, &v)) < 0)
			die(mb_db_errmsg(db), r);
		bytes += v.len;
		keys++;
		long rs = rss_kb();
		if (rs > peak)
			peak = rs;
	}
	if (r != MB_ENOTFOUND)
		die(mb_db_errmsg(db), r);
	double dt = now_s() - t0;
	struct mb_cache_stats cs;
	mb_cache_stats_get(mb_sg_cache(sg), &cs);
	printf("cache_mib %u\nscanned_mib %.0f\nkeys %llu\nscan_mib_per_s %.1f\n"
	       "cache_in_use_mib %.1f\npeak_rss_mib %.1f\n",
	       cache_mb, (double)bytes / 1048576.0, (unsigned long long)keys,
	       (double)bytes / 1048576.0 / dt, (double)cs.bytes_in_use / 1048576.0,
	       (double)peak / 1024.0);
	mb_val_free(&v);
	mb_cursor_close(c);
	mb_db_close(db);
	mb_sg_close(sg);
	return 0;
}

static void ops_done(void *arg, int status)
{
	if (status)
		die("async commit", status);
}

static int cmd_ops(const char *dir, long n)
{
	struct mb_sg *sg = open_sg(dir, 256);
	struct mb_db *db;
	struct mb_tree *t;
	int r = mb_db_open(sg, "ops.mdb", 0, MB_DB_CREATE, &db);
	if (r < 0 || (r = mb_db_begin(db)) < 0 ||
	    (r = mb_tree_open(db, "t", MB_TREE_CREATE, &t)) < 0 || (r = mb_db_commit(db)) < 0)
		die("open", r);
	uint8_t v[100];
	memset(v, 7, sizeof(v));
	uint64_t s = 88172645463325252ull;
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		if (i % 100 == 0 && (r = mb_db_begin(db)) < 0)
			die("begin", r);
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint8_t k[8];
		mb_key_u64(k, s % (uint64_t)(n * 4));
		if ((r = mb_tree_put(t, k, 8, v, sizeof(v), 0)) < 0)
			die("put", r);
		if (i % 100 == 99 && (r = mb_db_commit_async(db, ops_done, NULL)) < 0)
			die("commit", r);
	}
	if (mb_db_in_txn(db))
		mb_db_commit(db);
	mb_sg_flush(sg);
	double t1 = now_s();
	struct mb_val val = MB_VAL_INIT;
	long found = 0;
	for (long i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint8_t k[8];
		mb_key_u64(k, s % (uint64_t)(n * 4));
		if (mb_tree_get(t, k, 8, &val) == 0)
			found++;
	}
	double t2 = now_s();
	printf("puts_per_s %.0f\ngets_per_s %.0f\nfound %ld\n", n / (t1 - t0), n / (t2 - t1),
	       found);
	mb_val_free(&val);
	mb_db_close(db);
	mb_sg_close(sg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "ops"))
		return cmd_ops(argv[2], atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "fill"))
		return cmd_fill(argv[2], atol(argv[3]), argc > 4 ? (uint32_t)atol(argv[4]) : 32768);
	if (argc >= 6 && !strcmp(argv[1], "read"))
		return cmd_read(argv[2], atoi(argv[3]), atof(argv[4]), (unsigned)atoi(argv[5]));
	if (argc >= 5 && !strcmp(argv[1], "commit"))
		return cmd_commit(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "scan"))
		return cmd_scan(argv[2], (unsigned)atoi(argv[3]));
	fprintf(stderr,
		"usage: mb-dbbench fill DIR MB [PAGE] | read DIR THREADS SECONDS CACHE_MB |\n"
		"       commit DIR COMMITTERS SECONDS | scan DIR CACHE_MB | ops DIR N\n");
	return 2;
}
