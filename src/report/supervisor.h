/* supervisor.h: child processes of the console and of the headless run.
 *
 * The supervisor spawns children (the program itself, from /proc/self/exe,
 * or any program for tests) with uv_spawn on the caller's libuv loop.  Each
 * child gets: stdin from /dev/null, stdout and stderr as pipes (split into
 * lines; stdout is scanned for "listening on ADDR:PORT"; the last stderr
 * lines are kept for error reports) and an extra pipe as file descriptor
 * MB_SUP_STATS_FD, read with the stats-stream reader (core/stats.h).
 *
 * Invariants: no child outlives the supervisor.  Every child runs in its
 * own process group (setsid) and, where util-linux setpriv exists, with
 * PR_SET_PDEATHSIG (SIGTERM) so that it also dies when the supervisor is
 * killed outright.  Stopping sends SIGTERM to the group, then SIGKILL after
 * the grace period.  mb_sup_emergency_kill() is async-signal-safe and is
 * meant for crash handlers.  A child's exit is reported once (on_exit),
 * after its pipes are drained; the child object stays valid until
 * mb_child_release() or mb_sup_destroy().
 */
#ifndef MB_REPORT_SUPERVISOR_H
#define MB_REPORT_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "core/stats.h"

/* The stats pipe's descriptor number in every child. */
#define MB_SUP_STATS_FD 3
#define MB_SUP_STATS_FD_STR "3"
/* Default grace period between SIGTERM and SIGKILL. */
#define MB_SUP_GRACE_MS 5000u

struct mb_sup;
struct mb_child;

enum mb_child_stream { MB_CHILD_STDOUT = 1, MB_CHILD_STDERR = 2 };

struct mb_sup_ops {
	/* One decoded stats line (may be NULL). */
	void (*on_stats)(void *arg, struct mb_child *c, const struct mb_stats_msg *m);
	/* One line of stdout or stderr ('\r' also ends a line; may be NULL). */
	void (*on_line)(void *arg, struct mb_child *c, enum mb_child_stream s, const char *line);
	/* stdout said "listening on ADDR:PORT" (may be NULL). */
	void (*on_listening)(void *arg, struct mb_child *c, const char *addr, int port);
	/* The child exited and its pipes are drained (may be NULL). */
	void (*on_exit)(void *arg, struct mb_child *c);
};

int mb_sup_create(uv_loop_t *loop, const struct mb_sup_ops *ops, void *arg, struct mb_sup **out);
/* Kills (SIGKILL) any child still running, closes every handle; the loop
 * must be run afterwards until the handles are closed (uv_run). */
void mb_sup_destroy(struct mb_sup *s);

/* Program the children run: NULL (default) is this program (/proc/self/exe). */
int mb_sup_set_program(struct mb_sup *s, const char *path);
/* The program children run. */
const char *mb_sup_program(const struct mb_sup *s);
/* Use setpriv --pdeathsig when available (default true). */
void mb_sup_set_pdeathsig(struct mb_sup *s, bool on);

/* Spawn a child; args are its arguments after the program name, NULL
 * terminated.  name labels it in messages ("store", "load", ...). */
int mb_sup_spawn(struct mb_sup *s, const char *name, const char *const *args,
		 struct mb_child **out);
/* How a child other than this program's usual one is run (mpirun). */
struct mb_spawn_opts {
	const char *program;  /* NULL: the supervisor's program */
	bool stats_on_stdout; /* its stats stream comes on stdout, not on
			       * MB_SUP_STATS_FD (mpirun forwards rank 0's
			       * stdout, not its other descriptors) */
	int stop_signal;      /* 0: stopping sends SIGTERM to the group; else
			       * this signal to the child alone (mpirun
			       * forwards SIGUSR1 to every rank) */
};
int mb_sup_spawn_ex(struct mb_sup *s, const char *name, const char *const *args,
		    const struct mb_spawn_opts *o, struct mb_child **out);
/* SIGTERM to the child's group now (or its stop signal), SIGKILL after
 * grace_ms if still alive. */
int mb_child_stop(struct mb_child *c, unsigned grace_ms);
/* One line (a newline is added) to the child over its stats channel (a
 * socket pair): the store reads control lines there (fault injection). */
int mb_child_send(struct mb_child *c, const char *line);
/* SIGKILL the child itself (not its group): an injected crash. */
int mb_child_kill(struct mb_child *c);
/* Stop every live child. */
void mb_sup_stop_all(struct mb_sup *s, unsigned grace_ms);
/* Children spawned and not yet reported exited. */
int mb_sup_live(const struct mb_sup *s);
/* Free an exited child's object (no-op while it runs: it is freed on exit). */
void mb_child_release(struct mb_child *c);

pid_t mb_child_pid(const struct mb_child *c);
bool mb_child_exited(const struct mb_child *c);
/* True when mb_child_stop() was called (an exit is then expected). */
bool mb_child_stop_requested(const struct mb_child *c);
int64_t mb_child_exit_status(const struct mb_child *c);
int mb_child_term_signal(const struct mb_child *c);
/* The port from "listening on", or -1. */
int mb_child_port(const struct mb_child *c);
/* Stats lines received, and malformed lines skipped. */
uint64_t mb_child_stats_lines(const struct mb_child *c);
uint64_t mb_child_bad_lines(const struct mb_child *c);
/* The last (up to 20) stderr lines, joined with '\n', into buf. */
void mb_child_stderr_tail(const struct mb_child *c, char *buf, size_t len);
/* "store exited with status 3: <last stderr line>" into buf. */
void mb_child_describe_exit(const struct mb_child *c, char *buf, size_t len);
void mb_child_set_data(struct mb_child *c, void *data);
void *mb_child_data(const struct mb_child *c);

/* Async-signal-safe: SIGTERM every live child's process group (for crash
 * and signal handlers of the supervising process). */
void mb_sup_emergency_kill(void);

#endif
