/* test_supervisor.c: unit tests of the supervisor's plumbing with real
 * child processes (/bin/sh scripts: they write well-formed stats lines on
 * fd 3 to exercise the pipe and the reader only; no figure from them is
 * ever shown).  Covers: stats lines reach the callback, "listening on"
 * is parsed, stderr tail kept, an unexpected death is reported with its
 * status and last stderr line, SIGTERM then SIGKILL escalation, the whole
 * process group goes, destroy leaves no child, and PR_SET_PDEATHSIG kills
 * a child whose supervisor was SIGKILLed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "core/error.h"
#include "core/sampler.h"
#include "report/supervisor.h"

struct ctx {
	int stats;
	double last_rpc;
	bool had_rpc;
	int port;
	int exits;
	int lines;
	struct mb_child *exited;
};

static void on_stats(void *arg, struct mb_child *c, const struct mb_stats_msg *m)
{
	struct ctx *x = arg;
	(void)c;
	x->stats++;
	if (m->has[MB_C_RPC_OPS]) {
		x->had_rpc = true;
		x->last_rpc = m->value[MB_C_RPC_OPS];
	}
}

static void on_line(void *arg, struct mb_child *c, enum mb_child_stream s, const char *line)
{
	struct ctx *x = arg;
	(void)c;
	(void)s;
	(void)line;
	x->lines++;
}

static void on_listening(void *arg, struct mb_child *c, const char *addr, int port)
{
	struct ctx *x = arg;
	(void)c;
	assert_string_equal(addr, "127.0.0.1");
	x->port = port;
}

static void on_exit_cb(void *arg, struct mb_child *c)
{
	struct ctx *x = arg;
	x->exits++;
	x->exited = c;
}

static const struct mb_sup_ops ops = {on_stats, on_line, on_listening, on_exit_cb};

/* Run the loop until cond or timeout_ms. */
#define RUN_UNTIL(loop, cond, timeout_ms)                                                          \
	do {                                                                                       \
		double t_end = mb_now_s() + (timeout_ms) / 1000.0;                                 \
		while (!(cond) && mb_now_s() < t_end)                                              \
			uv_run((loop), UV_RUN_NOWAIT), usleep(2000);                               \
	} while (0)

static bool alive(pid_t pid)
{
	char path[64], buf[512];
	if (kill(pid, 0) != 0)
		return false;
	/* a zombie (not yet reaped by its new parent) is dead */
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && p[2] == 'Z');
}

static struct mb_sup *make_sup(uv_loop_t *loop, struct ctx *x)
{
	struct mb_sup *s;
	memset(x, 0, sizeof(*x));
	assert_int_equal(mb_sup_create(loop, &ops, x, &s), 0);
	assert_int_equal(mb_sup_set_program(s, "/bin/sh"), 0);
	return s;
}

static void finish(uv_loop_t *loop, struct mb_sup *s)
{
	mb_sup_destroy(s);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(loop), 0);
}

static void test_stats_and_listening(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct ctx x;
	struct mb_sup *s = make_sup(&loop, &x);
	const char *args[] = {"-c",
			      "echo 'listening on 127.0.0.1:4242';"
			      "for i in 1 2 3; do "
			      "printf "
			      "'{\"src\":\"store\",\"pid\":%d,\"seq\":%d,\"t\":%d.0,\"dt\":1.0,"
			      "\"c\":{\"rpc_ops_per_s\":9%d0.5}}\\n' $$ $i $i $i >&3;"
			      "done; printf 'not json\\n' >&3; echo warn >&2; exit 0",
			      NULL};
	struct mb_child *c;
	assert_int_equal(mb_sup_spawn(s, "fake", args, &c), 0);
	assert_true(mb_child_pid(c) > 0);
	RUN_UNTIL(&loop, x.exits == 1, 10000);
	assert_int_equal(x.exits, 1);
	assert_int_equal(x.stats, 3);
	assert_true(x.had_rpc);
	assert_float_equal(x.last_rpc, 930.5, 1e-9);
	assert_int_equal(x.port, 4242);
	assert_int_equal(mb_child_port(c), 4242);
	assert_int_equal(mb_child_stats_lines(c), 3);
	assert_int_equal(mb_child_bad_lines(c), 1);
	assert_true(mb_child_exited(c));
	assert_int_equal(mb_child_exit_status(c), 0);
	char tail[256];
	mb_child_stderr_tail(c, tail, sizeof(tail));
	assert_string_equal(tail, "warn");
	assert_int_equal(mb_sup_live(s), 0);
	mb_child_release(c);
	finish(&loop, s);
}

static void test_death_detected(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct ctx x;
	struct mb_sup *s = make_sup(&loop, &x);
	const char *args[] = {"-c", "echo starting >&2; sleep 0.2; echo 'disk on fire' >&2; exit 3",
			      NULL};
	struct mb_child *c;
	assert_int_equal(mb_sup_spawn(s, "store", args, &c), 0);
	RUN_UNTIL(&loop, x.exits == 1, 10000);
	assert_int_equal(x.exits, 1);
	assert_false(mb_child_stop_requested(c));
	assert_int_equal(mb_child_exit_status(c), 3);
	char desc[512];
	mb_child_describe_exit(c, desc, sizeof(desc));
	assert_non_null(strstr(desc, "store exited with status 3"));
	assert_non_null(strstr(desc, "disk on fire"));
	mb_child_release(c);
	finish(&loop, s);
}

static void test_stop_kills_group(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct ctx x;
	struct mb_sup *s = make_sup(&loop, &x);
	/* a grandchild in the same group, its pid on stdout */
	const char *args[] = {"-c", "sleep 100 & echo \"grandchild $!\" >&2; wait", NULL};
	struct mb_child *c;
	assert_int_equal(mb_sup_spawn(s, "load", args, &c), 0);
	char tail[256] = "";
	RUN_UNTIL(&loop, (mb_child_stderr_tail(c, tail, sizeof(tail)), tail[0]), 5000);
	long gpid = 0;
	assert_int_equal(sscanf(tail, "grandchild %ld", &gpid), 1);
	assert_true(alive((pid_t)gpid));
	assert_int_equal(mb_child_stop(c, 2000), 0);
	RUN_UNTIL(&loop, x.exits == 1, 10000);
	assert_int_equal(x.exits, 1);
	assert_true(mb_child_stop_requested(c));
	assert_int_equal(mb_child_term_signal(c), SIGTERM);
	RUN_UNTIL(&loop, !alive((pid_t)gpid), 3000);
	assert_false(alive((pid_t)gpid));
	mb_child_release(c);
	finish(&loop, s);
}

static void test_sigkill_after_grace(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct ctx x;
	struct mb_sup *s = make_sup(&loop, &x);
	const char *args[] = {"-c", "trap '' TERM; echo ready >&2; while :; do sleep 0.05; done",
			      NULL};
	struct mb_child *c;
	assert_int_equal(mb_sup_spawn(s, "stubborn", args, &c), 0);
	char tail[64] = "";
	RUN_UNTIL(&loop, (mb_child_stderr_tail(c, tail, sizeof(tail)), tail[0]), 5000);
	mb_child_stop(c, 300);
	RUN_UNTIL(&loop, x.exits == 1, 10000);
	assert_int_equal(x.exits, 1);
	assert_int_equal(mb_child_term_signal(c), SIGKILL);
	mb_child_release(c);
	finish(&loop, s);
}

static void test_destroy_leaves_no_child(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct ctx x;
	struct mb_sup *s = make_sup(&loop, &x);
	const char *args[] = {"-c", "sleep 100", NULL};
	struct mb_child *c1, *c2;
	assert_int_equal(mb_sup_spawn(s, "a", args, &c1), 0);
	assert_int_equal(mb_sup_spawn(s, "b", args, &c2), 0);
	pid_t p1 = mb_child_pid(c1), p2 = mb_child_pid(c2);
	assert_int_equal(mb_sup_live(s), 2);
	assert_true(alive(p1) && alive(p2));
	finish(&loop, s);
	assert_false(alive(p1));
	assert_false(alive(p2));
}

static void test_spawn_failure(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct ctx x;
	struct mb_sup *s = make_sup(&loop, &x);
	mb_sup_set_pdeathsig(s, false);
	assert_int_equal(mb_sup_set_program(s, "/nonexistent/program"), 0);
	const char *args[] = {NULL};
	struct mb_child *c = NULL;
	assert_int_not_equal(mb_sup_spawn(s, "x", args, &c), 0);
	assert_int_equal(mb_sup_live(s), 0);
	finish(&loop, s);
}

/* The supervisor itself is SIGKILLed: PR_SET_PDEATHSIG takes its child. */
static void test_pdeathsig(void **state)
{
	(void)state;
	if (access("/usr/bin/setpriv", X_OK) != 0)
		skip();
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t sup_pid = fork();
	assert_true(sup_pid >= 0);
	if (sup_pid == 0) {
		uv_loop_t loop;
		uv_loop_init(&loop);
		struct ctx x;
		struct mb_sup *s;
		memset(&x, 0, sizeof(x));
		if (mb_sup_create(&loop, &ops, &x, &s) || mb_sup_set_program(s, "/bin/sh"))
			_exit(1);
		const char *args[] = {"-c", "sleep 100", NULL};
		struct mb_child *c;
		if (mb_sup_spawn(s, "orphan?", args, &c))
			_exit(1);
		pid_t p = mb_child_pid(c);
		usleep(200000); /* let setpriv set the signal and exec */
		if (write(fds[1], &p, sizeof(p)) != sizeof(p))
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	pid_t child;
	assert_int_equal(read(fds[0], &child, sizeof(child)), sizeof(child));
	close(fds[0]);
	assert_true(alive(child));
	kill(sup_pid, SIGKILL);
	waitpid(sup_pid, NULL, 0);
	double end = mb_now_s() + 5;
	while (alive(child) && mb_now_s() < end)
		usleep(10000);
	bool still = alive(child);
	if (still)
		kill(child, SIGKILL);
	assert_false(still);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stats_and_listening),
	    cmocka_unit_test(test_death_detected),
	    cmocka_unit_test(test_stop_kills_group),
	    cmocka_unit_test(test_sigkill_after_grace),
	    cmocka_unit_test(test_destroy_leaves_no_child),
	    cmocka_unit_test(test_spawn_failure),
	    cmocka_unit_test(test_pdeathsig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
