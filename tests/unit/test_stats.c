/* test_stats.c: unit tests of the stats stream (core/stats.h): a writer
 * and a reader over a real pipe, bytes fed in every split, malformed and
 * over-long lines skipped and counted, a partial line at EOF, a writer
 * whose reader is gone (EPIPE), and a forked child that dies mid-line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "core/stats.h"

#define MAXMSG 64
struct got {
	int n;
	struct mb_stats_msg msg[MAXMSG];
	char hist[MAXMSG][2048];
	char extra[MAXMSG][64];
};

static void collect(void *arg, const struct mb_stats_msg *m)
{
	struct got *g = arg;
	assert_true(g->n < MAXMSG);
	g->msg[g->n] = *m;
	g->msg[g->n].root = NULL; /* borrowed: not valid after the callback */
	json_t *h = json_object_get(json_object_get(m->root, "h"), "rtt");
	snprintf(g->hist[g->n], sizeof(g->hist[0]), "%s", h ? json_string_value(h) : "");
	json_t *x = json_object_get(json_object_get(m->root, "x"), "note");
	snprintf(g->extra[g->n], sizeof(g->extra[0]), "%s", x ? json_string_value(x) : "");
	g->n++;
}

/* Drain fd into a malloc'd buffer until EOF. */
static char *slurp(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	assert_non_null(b);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap);
			assert_non_null(b);
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		assert_true(r >= 0);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return b;
}

/* Write N messages (and an end line) into a pipe, return the bytes. */
static char *make_stream(int nmsg, size_t *len, char **hist_text)
{
	int fds[2];
	struct mb_stats_writer *w;
	struct mb_hist *h;
	double value[MB_COUNTER_COUNT] = {0};
	bool has[MB_COUNTER_COUNT] = {false};

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(mb_stats_writer_create(fds[1], "store", &w), 0);
	assert_int_equal(mb_hist_create(&h), 0);
	for (int i = 1; i <= 100; i++)
		mb_hist_record(h, (uint64_t)i * 10000);
	assert_int_equal(mb_hist_encode(h, hist_text), 0);
	for (int i = 0; i < nmsg; i++) {
		value[MB_C_RPC_OPS] = 950.5 + i;
		has[MB_C_RPC_OPS] = true;
		value[MB_C_USERS] = 8000;
		has[MB_C_USERS] = true;
		value[MB_C_CLIENT_LATENCY] = INFINITY; /* not finite: not sent */
		has[MB_C_CLIENT_LATENCY] = true;
		value[MB_C_DISK_MB] = 17.9;
		has[MB_C_DISK_MB] = false; /* not measured: not sent */
		json_t *hs = json_pack("{s:s}", "rtt", *hist_text);
		json_t *x = json_pack("{s:s}", "note", "line\nwith newline");
		assert_int_equal(mb_stats_write(w, 1.0, value, has, hs, x), 0);
		json_decref(hs);
		json_decref(x);
	}
	assert_int_equal(mb_stats_write_end(w), 0);
	mb_stats_writer_destroy(w);
	mb_hist_destroy(h);
	close(fds[1]);
	char *b = slurp(fds[0], len);
	close(fds[0]);
	return b;
}

static void check_stream(const struct got *g, int nmsg, const char *hist_text)
{
	assert_int_equal(g->n, nmsg + 1);
	for (int i = 0; i < nmsg; i++) {
		const struct mb_stats_msg *m = &g->msg[i];
		assert_string_equal(m->src, "store");
		assert_int_equal(m->pid, getpid());
		assert_int_equal(m->seq, (uint64_t)i);
		assert_true(m->dt == 1.0);
		assert_true(m->has[MB_C_RPC_OPS]);
		assert_true(m->value[MB_C_RPC_OPS] == 950.5 + i);
		assert_true(m->has[MB_C_USERS]);
		assert_true(m->value[MB_C_USERS] == 8000);
		assert_false(m->has[MB_C_CLIENT_LATENCY]);
		assert_false(m->has[MB_C_DISK_MB]);
		assert_false(m->end);
		assert_string_equal(g->hist[i], hist_text);
		assert_string_equal(g->extra[i], "line\nwith newline");
		if (i > 0)
			assert_true(m->t >= g->msg[i - 1].t);
	}
	assert_true(g->msg[nmsg].end);
	assert_int_equal(g->msg[nmsg].seq, (uint64_t)nmsg);
}

static void test_roundtrip(void **state)
{
	(void)state;
	size_t len;
	char *hist_text;
	char *b = make_stream(5, &len, &hist_text);
	struct got *g = calloc(1, sizeof(*g));
	struct mb_stats_reader *r;

	/* exactly one line per message, newlines inside strings escaped */
	int lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += b[i] == '\n';
	assert_int_equal(lines, 6);
	assert_int_equal(b[len - 1], '\n');

	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	assert_int_equal(mb_stats_reader_feed(r, b, len), 0);
	assert_false(mb_stats_reader_ended(r));
	mb_stats_reader_eof(r);
	assert_true(mb_stats_reader_ended(r));
	assert_int_equal(mb_stats_reader_bad_lines(r), 0);
	check_stream(g, 5, hist_text);

	/* the histogram text decodes back */
	struct mb_hist *h;
	assert_int_equal(mb_hist_create(&h), 0);
	assert_int_equal(mb_hist_decode_merge(h, g->hist[0]), 0);
	assert_int_equal(mb_hist_count(h), 100);
	mb_hist_destroy(h);
	mb_stats_reader_destroy(r);
	free(g);
	free(b);
	free(hist_text);
}

static void test_splits(void **state)
{
	(void)state;
	size_t len;
	char *hist_text;
	char *b = make_stream(8, &len, &hist_text);
	struct got *g = calloc(1, sizeof(*g));
	struct mb_stats_reader *r;

	/* one byte at a time */
	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(mb_stats_reader_feed(r, b + i, 1), 0);
	mb_stats_reader_eof(r);
	assert_int_equal(mb_stats_reader_bad_lines(r), 0);
	check_stream(g, 8, hist_text);
	mb_stats_reader_destroy(r);

	/* random splits, many rounds */
	srand(12345);
	for (int round = 0; round < 50; round++) {
		memset(g, 0, sizeof(*g));
		assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
		for (size_t i = 0; i < len;) {
			size_t n = (size_t)(rand() % 700);
			if (n > len - i)
				n = len - i;
			assert_int_equal(mb_stats_reader_feed(r, b + i, n), 0);
			i += n;
		}
		mb_stats_reader_eof(r);
		assert_int_equal(mb_stats_reader_bad_lines(r), 0);
		check_stream(g, 8, hist_text);
		mb_stats_reader_destroy(r);
	}
	free(g);
	free(b);
	free(hist_text);
}

static const char good[] = "{\"src\":\"load\",\"pid\":7,\"seq\":3,\"t\":1.5,\"dt\":1,"
			   "\"c\":{\"users\":12,\"no_such_counter\":1}}\n";

static void test_malformed(void **state)
{
	(void)state;
	struct got *g = calloc(1, sizeof(*g));
	struct mb_stats_reader *r;
	static const char *bad[] = {
	    "garbage\n",
	    "\n",
	    "[1,2,3]\n",
	    "{\"src\":1,\"pid\":7,\"seq\":3,\"t\":1.5}\n",
	    "{\"pid\":7,\"seq\":3,\"t\":1.5}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":-1,\"t\":1.5}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":3,\"t\":\"now\"}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":3,\"t\":1,\"c\":{\"users\":\"many\"}}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":3,\"t\":1,\"c\":[1]}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":3,\"t\":1,\"h\":{\"rtt\":5}}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":3,\"t\":1,\"end\":1}\n",
	    "{\"src\":\"x\",\"src\":\"y\",\"pid\":7,\"seq\":3,\"t\":1}\n",
	    "{\"src\":\"x\",\"pid\":7,\"seq\":3,\"t\":1}{}\n",
	    "{\"src\":\"0123456789012345678901234567890123456789\",\"pid\":7,\"seq\":3,\"t\":1}\n",
	};
	size_t nbad = sizeof(bad) / sizeof(bad[0]);
	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	for (size_t i = 0; i < nbad; i++) {
		assert_int_equal(mb_stats_reader_feed(r, bad[i], strlen(bad[i])), 0);
		assert_int_equal(mb_stats_reader_feed(r, good, strlen(good)), 0);
	}
	assert_int_equal(mb_stats_reader_bad_lines(r), nbad);
	assert_int_equal(g->n, (int)nbad);
	for (int i = 0; i < g->n; i++) {
		assert_string_equal(g->msg[i].src, "load");
		assert_int_equal(g->msg[i].pid, 7);
		assert_true(g->msg[i].has[MB_C_USERS]);
		assert_true(g->msg[i].value[MB_C_USERS] == 12);
		assert_false(g->msg[i].has[MB_C_RPC_OPS]);
		assert_true(g->msg[i].dt == 1.0);
	}
	mb_stats_reader_destroy(r);
	free(g);
}

static void test_overlong(void **state)
{
	(void)state;
	struct got *g = calloc(1, sizeof(*g));
	struct mb_stats_reader *r;
	size_t chunk = 65536;
	char *junk = malloc(chunk);
	memset(junk, 'x', chunk);
	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	assert_int_equal(mb_stats_reader_feed(r, good, strlen(good)), 0);
	/* a line of MB_STATS_MAX_LINE + 2 chunks, in chunks, then a good line */
	for (size_t sent = 0; sent < MB_STATS_MAX_LINE + 2 * chunk; sent += chunk)
		assert_int_equal(mb_stats_reader_feed(r, junk, chunk), 0);
	assert_int_equal(mb_stats_reader_bad_lines(r), 1);
	assert_int_equal(mb_stats_reader_feed(r, "yyy\n", 4), 0); /* end of the long line */
	assert_int_equal(mb_stats_reader_bad_lines(r), 1);
	assert_int_equal(mb_stats_reader_feed(r, good, strlen(good)), 0);
	/* an over-long line ending in the same chunk */
	char *big = malloc(MB_STATS_MAX_LINE + 10);
	memset(big, 'z', MB_STATS_MAX_LINE + 9);
	big[MB_STATS_MAX_LINE + 9] = '\n';
	assert_int_equal(mb_stats_reader_feed(r, big, MB_STATS_MAX_LINE + 10), 0);
	assert_int_equal(mb_stats_reader_feed(r, good, strlen(good)), 0);
	mb_stats_reader_eof(r);
	assert_int_equal(mb_stats_reader_bad_lines(r), 2);
	assert_int_equal(g->n, 3);
	free(big);
	free(junk);
	mb_stats_reader_destroy(r);
	free(g);
}

static void test_eof_partial(void **state)
{
	(void)state;
	struct got *g = calloc(1, sizeof(*g));
	struct mb_stats_reader *r;
	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	assert_int_equal(mb_stats_reader_feed(r, good, strlen(good)), 0);
	/* a complete object without its newline is still a partial line */
	assert_int_equal(mb_stats_reader_feed(r, good, strlen(good) - 1), 0);
	assert_int_equal(g->n, 1);
	mb_stats_reader_eof(r);
	assert_int_equal(g->n, 1);
	assert_int_equal(mb_stats_reader_bad_lines(r), 1);
	assert_true(mb_stats_reader_ended(r));
	assert_int_equal(mb_stats_reader_feed(r, good, strlen(good)), MB_ESTATE);
	mb_stats_reader_eof(r); /* idempotent */
	assert_int_equal(mb_stats_reader_bad_lines(r), 1);
	assert_int_equal(g->n, 1);
	mb_stats_reader_destroy(r);
	/* eof on an empty stream: nothing bad */
	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	mb_stats_reader_eof(r);
	assert_int_equal(mb_stats_reader_bad_lines(r), 0);
	mb_stats_reader_destroy(r);
	free(g);
}

static void test_writer_closed(void **state)
{
	(void)state;
	int fds[2];
	struct mb_stats_writer *w;
	double v[MB_COUNTER_COUNT] = {0};
	bool has[MB_COUNTER_COUNT] = {false};
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(mb_stats_writer_create(fds[1], "load", &w), 0);
	close(fds[0]);
	has[MB_C_USERS] = true;
	assert_int_equal(mb_stats_write(w, 1.0, v, has, NULL, NULL), MB_ECLOSED);
	assert_int_equal(mb_stats_write_end(w), MB_ECLOSED);
	mb_stats_writer_destroy(w);
	close(fds[1]);
	signal(SIGPIPE, old);

	/* bad arguments */
	assert_int_equal(mb_stats_writer_create(-1, "x", &w), MB_EINVAL);
	assert_int_equal(mb_stats_writer_create(1, "a-source-name-that-is-far-too-long-to-fit", &w),
			 MB_EINVAL);
}

static void test_child_dies(void **state)
{
	(void)state;
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mb_stats_writer *w;
		double v[MB_COUNTER_COUNT] = {0};
		bool has[MB_COUNTER_COUNT] = {false};
		close(fds[0]);
		if (mb_stats_writer_create(fds[1], "child", &w) != 0)
			_exit(1);
		v[MB_C_PROCESSOR_PCT] = 57;
		has[MB_C_PROCESSOR_PCT] = true;
		for (int i = 0; i < 3; i++)
			if (mb_stats_write(w, 1.0, v, has, NULL, NULL) != 0)
				_exit(1);
		/* half a line, then death without cleanup */
		(void)!write(fds[1], "{\"src\":\"child\",\"pid\":", 21);
		raise(SIGKILL);
		_exit(1);
	}
	close(fds[1]);
	struct got *g = calloc(1, sizeof(*g));
	struct mb_stats_reader *r;
	assert_int_equal(mb_stats_reader_create(collect, g, &r), 0);
	char buf[37];
	for (;;) {
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n >= 0);
		if (n == 0)
			break;
		assert_int_equal(mb_stats_reader_feed(r, buf, (size_t)n), 0);
	}
	mb_stats_reader_eof(r);
	close(fds[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(g->n, 3);
	for (int i = 0; i < 3; i++) {
		assert_string_equal(g->msg[i].src, "child");
		assert_int_equal(g->msg[i].pid, pid);
		assert_true(g->msg[i].value[MB_C_PROCESSOR_PCT] == 57);
		assert_false(g->msg[i].end);
	}
	assert_int_equal(mb_stats_reader_bad_lines(r), 1);
	assert_true(mb_stats_reader_ended(r));
	mb_stats_reader_destroy(r);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),	cmocka_unit_test(test_splits),
	    cmocka_unit_test(test_malformed),	cmocka_unit_test(test_overlong),
	    cmocka_unit_test(test_eof_partial), cmocka_unit_test(test_writer_closed),
	    cmocka_unit_test(test_child_dies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
